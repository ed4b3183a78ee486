// Which new pages a full render cache takes. Storing every render lets a scan of pages asked for
// once (a crawler walking every id) evict the pages visitors share. It buys no CPU, only the hit
// set (docs/architecture.md#what-each-optimization-saves).
import { LRUCache } from 'lru-cache';

/**
 * `second`: once storing a new page would evict another, it is stored the second time it is asked
 * for while a stored copy would still have answered (fresh, or within stale-while-revalidate).
 * `first`: every render is stored, least recently used out.
 */
export type Admission = 'second' | 'first';

/** RENDER_CACHE_ADMISSION's values, the default first. */
export const ADMISSIONS: readonly Admission[] = ['second', 'first'];

/** Bytes a remembered key counts beyond its characters: its LRU slot and the string header. */
const KEY_OVERHEAD_BYTES = 64;

/**
 * The keys asked for once while the cache was full, each remembered for as long as its page would
 * have answered from the cache, bounded in bytes (the least recently seen forgotten first):
 * TinyLFU's doorkeeper, without the frequency sketch.
 */
export class SecondRequestFilter {
  readonly #seen: LRUCache<string, true>;

  constructor(maxBytes: number, now: () => number) {
    this.#seen = new LRUCache<string, true>({
      maxSize: maxBytes,
      sizeCalculation: (_, key) => key.length + KEY_OVERHEAD_BYTES,
      perf: { now },
      ttlResolution: 0,
    });
  }

  /** Whether `key` was asked for before, within `withinMs`; if not, it is remembered from now. */
  admits(key: string, withinMs: number): boolean {
    if (this.#seen.has(key)) {
      this.#seen.delete(key);
      return true;
    }
    // A ttl of 0 would mean "forever" to lru-cache.
    this.#seen.set(key, true, { ttl: Math.max(1, withinMs) });
    return false;
  }
}
