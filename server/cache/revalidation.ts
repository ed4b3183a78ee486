// What a revalidation asks of the caches, wherever it comes from (the endpoint, the app, another
// process) and whichever cache applies it (this process's, the shared tier): one shape.

/** `soft`: pages go stale (served once more while one render refreshes them); `hard`: deleted. */
export type RevalidationMode = 'soft' | 'hard';
export const REVALIDATION_MODES: readonly RevalidationMode[] = ['soft', 'hard'];

export interface Revalidation {
  /** Exact paths (`/products/42`): every cached page of that path, whatever its origin and query. */
  readonly paths: readonly string[];
  /** Cache groups (RFC 9875): every page that declared one of them in its `Cache-Groups`. */
  readonly groups: readonly string[];
  readonly mode: RevalidationMode;
  /** When it was asked (ms since the epoch): pages stored since are already new and left alone. */
  readonly at: number;
}
