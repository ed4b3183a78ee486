// What the cache core knows of every entry, whatever its user keeps in it (a page, an API's answer),
// and how long an entry may be used: RFC 9111's freshness, RFC 5861's stale windows, and what a
// revalidation on demand makes of it.

/**
 * How long a shared cache may use a response (RFC 9111 §4.2, RFC 5861), in milliseconds from when
 * it was stored.
 */
export interface SharedCachePolicy {
  freshMs: number;
  staleWhileRevalidateMs: number;
  staleIfErrorMs: number;
  /**
   * Kept this long past freshness, though no rule lets it answer, to be revalidated with its
   * validators (a 304 makes it fresh again without its body travelling): data with an ETag.
   */
  revalidatableMs?: number;
}

/** What the core knows of every entry, whatever else its user keeps in it. */
export interface StoredEntry {
  /** The cache groups (RFC 9875) it belongs to: what revalidation by group matches. */
  readonly groups: readonly string[];
  readonly policy: SharedCachePolicy;
  storedAt: number;
  /** The last refresh failed: the entry may be served stale up to stale-if-error. */
  refreshFailed: boolean;
  /**
   * A soft revalidation marked it: stale for as long as it stays in the cache, whatever its policy
   * says (what stale means is the store's `soft`). The refresh stores a new one.
   */
  revalidated?: boolean;
  /**
   * The keys of the entries it was made from, in the cache that holds them (a page: its data), so
   * that revalidating it by path reaches them too (Revalidation.keys).
   */
  sources?: readonly string[];
}

/**
 * What a soft revalidation makes of an entry: `stale`, served once more while one background
 * production refreshes it (pages: no visitor waits); `revalidate`, produced again before its next
 * use, with its validators (data: a 304 makes it fresh again, and a page is never built from what
 * was revalidated). Either may still answer in place of a failed production (stale-if-error).
 */
export type SoftRevalidation = 'stale' | 'revalidate';

/**
 * What the cache holds for a key at this moment:
 * - `fresh`: serve it.
 * - `stale`: serve it now and refresh it in the background (stale-while-revalidate, or
 *   stale-if-error after a failed refresh).
 * - `expired`: produce it; if that fails, `entry` may still answer while stale-if-error allows.
 * - `miss`: nothing stored.
 */
export type Lookup<E extends StoredEntry> =
  | { state: 'fresh' | 'stale'; entry: E; ageMs: number }
  | { state: 'expired'; entry: E; ageMs: number; usableOnError: boolean }
  | { state: 'miss' };

/** How long an entry is of any use: fresh, then stale while some rule allows serving it. */
export function lifetimeMs(policy: SharedCachePolicy): number {
  return (
    policy.freshMs +
    Math.max(policy.staleWhileRevalidateMs, policy.staleIfErrorMs, policy.revalidatableMs ?? 0)
  );
}

/**
 * What an entry can answer at `now`: by its policy, unless a soft revalidation marked it, which
 * makes it stale for as long as it is kept: served while refreshed (`stale`), or produced again
 * first (`revalidate`), answering only in place of a production that failed.
 */
export function freshness<E extends StoredEntry>(
  entry: E,
  now: number,
  soft: SoftRevalidation = 'stale',
): Lookup<E> {
  const ageMs = Math.max(0, now - entry.storedAt);
  const { freshMs, staleWhileRevalidateMs, staleIfErrorMs } = entry.policy;
  if (entry.revalidated) {
    return soft === 'stale'
      ? { state: 'stale', entry, ageMs }
      : { state: 'expired', entry, ageMs, usableOnError: ageMs < freshMs + staleIfErrorMs };
  }
  if (ageMs < freshMs) {
    return { state: 'fresh', entry, ageMs };
  }
  const staleWindow = Math.max(staleWhileRevalidateMs, entry.refreshFailed ? staleIfErrorMs : 0);
  if (ageMs < freshMs + staleWindow) {
    return { state: 'stale', entry, ageMs };
  }
  return { state: 'expired', entry, ageMs, usableOnError: ageMs < freshMs + staleIfErrorMs };
}
