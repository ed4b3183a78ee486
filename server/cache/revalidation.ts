// What a revalidation asks of the caches, wherever it comes from (the endpoint, the app, another
// process) and whichever cache applies it (this process's, the shared tier): one shape.

/**
 * `soft`: entries go stale. A page is served once more while one render refreshes it; data is
 * revalidated with its API before its next use (a page must not be built again from it).
 * `hard`: deleted.
 */
export type RevalidationMode = 'soft' | 'hard';
export const REVALIDATION_MODES: readonly RevalidationMode[] = ['soft', 'hard'];

export interface Revalidation {
  /** Exact paths (`/products/42`): every cached page of that path, whatever its origin and query. */
  readonly paths: readonly string[];
  /** Cache groups (RFC 9875): every entry that declared one of them in its `Cache-Groups`. */
  readonly groups: readonly string[];
  /**
   * Exact keys: the data the pages of `paths` were last made from (their entries' `sources`),
   * found by the process that took the revalidation; never asked for from outside.
   */
  readonly keys?: readonly string[];
  readonly mode: RevalidationMode;
  /** When it was asked (ms since the epoch): entries stored since are already new and left alone. */
  readonly at: number;
}
