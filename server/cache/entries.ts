// The entries of a cache, by key: bounded in bytes (least recently used out first, by lru-cache),
// with second-request admission once full, each kept while some rule can still use it, indexed by
// path and group for revalidation (entry-index.ts). What each entry can answer is entry.ts's.
import { LRUCache } from 'lru-cache';
import { type Admission, SecondRequestFilter } from './admission.ts';
import {
  freshness,
  lifetimeMs,
  type Lookup,
  type SoftRevalidation,
  type StoredEntry,
} from './entry.ts';
import { EntryIndex } from './entry-index.ts';
import type { Revalidation } from './revalidation.ts';

export interface EntriesSettings {
  /** Bytes of entries it holds (RENDER_CACHE_BYTES, DATA_CACHE_BYTES). */
  maxBytes: number;
  /** Which new entries a full cache takes (RENDER_CACHE_ADMISSION); `second` unless said otherwise. */
  admission?: Admission;
  /** The cache's clock (tests move their own). */
  now?: () => number;
}

export interface EntriesOptions<E extends StoredEntry> extends EntriesSettings {
  /** What an entry counts against maxBytes: everything it holds, its key and bookkeeping. */
  sizeOf: (entry: E, key: string) => number;
  /** The URL path of a key, for revalidation and purges by path; undefined: keys have none. */
  pathOf?: (key: string) => string | undefined;
  /** What a soft revalidation makes of an entry; `stale` unless said otherwise. */
  soft?: SoftRevalidation;
}

/** What putting an entry came to: `deferred` when the cache is full and it is new (admission). */
export type PutOutcome = 'stored' | 'deferred' | 'too-large';

export interface EntriesStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  /** Stale entries sent within stale-while-revalidate. */
  staleServed: number;
  /** Stale entries sent because their production failed or timed out (stale-if-error). */
  staleOnError: number;
  /** Revalidations applied here (whoever asked), and the entries they marked stale or deleted. */
  revalidations: number;
  revalidatedEntries: number;
  /** New entries not stored because the cache was full and they were asked for the first time. */
  deferred: number;
}

/**
 * How often, at most, a full cache scans for entries past their lifetime (see Entries#fits): a
 * scan of every entry is too dear to run on every miss of a scan of new ids (measured: docs/
 * architecture.md#what-each-optimization-saves).
 */
const PURGE_EXPIRED_EVERY_MS = 1000;

/** The keys a full cache remembers for second-request admission: a sixteenth of its bytes. */
const ADMISSION_MEMORY_SHARE = 16;
/** …but room for a few hundred keys however small the cache. */
const MIN_ADMISSION_MEMORY_BYTES = 64 * 1024;

export class Entries<E extends StoredEntry> {
  readonly #lru: LRUCache<string, E>;
  readonly #sizeOf: (entry: E, key: string) => number;
  readonly #pathOf: (key: string) => string | undefined;
  readonly #soft: SoftRevalidation;
  readonly #index = new EntryIndex();
  readonly #now: () => number;
  /** When #fits last dropped the entries past their lifetime (the cache's clock). */
  #purgedAt = -Infinity;
  /** Undefined with `first` admission. */
  readonly #secondRequest: SecondRequestFilter | undefined;
  readonly #counts = {
    hits: 0,
    misses: 0,
    staleServed: 0,
    staleOnError: 0,
    revalidations: 0,
    revalidatedEntries: 0,
    deferred: 0,
  };

  constructor({
    maxBytes,
    admission = 'second',
    now = Date.now,
    sizeOf,
    pathOf = () => undefined,
    soft = 'stale',
  }: EntriesOptions<E>) {
    this.#now = now;
    this.#sizeOf = sizeOf;
    this.#pathOf = pathOf;
    this.#soft = soft;
    this.#secondRequest =
      admission === 'second'
        ? new SecondRequestFilter(
            Math.max(MIN_ADMISSION_MEMORY_BYTES, Math.floor(maxBytes / ADMISSION_MEMORY_SHARE)),
            now,
          )
        : undefined;
    this.#lru = new LRUCache<string, E>({
      maxSize: maxBytes,
      // put and adopt pass the size they computed for admission; this is for any other set.
      sizeCalculation: sizeOf,
      // Time is the cache's own clock (tests advance it); entries go once no rule can use them.
      perf: { now },
      // Read the clock on every check: its default caches it for 1 ms, behind a clock tests move.
      ttlResolution: 0,
      // However an entry goes (deleted, evicted, expired, replaced), its index entries go with it.
      dispose: (entry, key) => this.#index.remove(key, this.#pathOf(key), entry.groups),
    });
  }

  get stats(): EntriesStats {
    return {
      entries: this.#lru.size,
      bytes: this.#lru.calculatedSize,
      maxBytes: this.#lru.maxSize,
      ...this.#counts,
    };
  }

  /** The cache's clock. */
  now(): number {
    return this.#now();
  }

  /** The URL path of a key, if its keys have one. */
  pathOf(key: string): string | undefined {
    return this.#pathOf(key);
  }

  /** What `key` holds now, counted as a hit, a stale answer or a miss. */
  lookup(key: string): Lookup<E> {
    const entry = this.#lru.get(key);
    if (entry === undefined) {
      this.#counts.misses++;
      return { state: 'miss' };
    }
    const found = this.freshness(entry);
    if (found.state === 'fresh') {
      this.#counts.hits++;
    } else if (found.state === 'stale') {
      this.#counts.staleServed++;
    } else {
      this.#counts.misses++;
    }
    return found;
  }

  /** The entry for `key` if it is fresh, without counting or reordering anything (a cheap pre-check). */
  peekFresh(key: string): E | undefined {
    const entry = this.#lru.peek(key);
    return entry !== undefined &&
      !entry.revalidated &&
      this.#now() - entry.storedAt < entry.policy.freshMs
      ? entry
      : undefined;
  }

  /** The entry stored for `key` while of any use, without counting or reordering anything. */
  peek(key: string): E | undefined {
    return this.#lru.peek(key);
  }

  /** The entry stored for `key`, even past its lifetime (until lru-cache drops it): for bookkeeping. */
  held(key: string): E | undefined {
    return this.#lru.peek(key, { allowStale: true });
  }

  /** What an entry can answer now, by its policy and this cache's reading of a soft revalidation. */
  freshness(entry: E, now = this.#now()): Lookup<E> {
    return freshness(entry, now, this.#soft);
  }

  /**
   * Keeps `entry` for `key` from now on (its storedAt is the caller's), if the cache admits it. An
   * entry larger than the whole cache is refused, and what the key held is dropped.
   */
  put(key: string, entry: E): PutOutcome {
    const bytes = this.#sizeOf(entry, key);
    if (!this.#admits(key, entry, bytes)) {
      return 'deferred';
    }
    // Kept while some rule can still use it, and not a moment longer.
    this.#set(key, entry, { ttl: lifetimeMs(entry.policy), size: bytes });
    return bytes > this.#lru.maxSize ? 'too-large' : 'stored';
  }

  /**
   * Replaces the entry stored for `key` by `next`, the same content made otherwise (a page with its
   * stored codings: compressed once), counted in its bytes, if `entry` is still what the key holds
   * and `next` fits. Its expiry stays: the lifetime counts from when it was stored.
   */
  replace(key: string, entry: E, next: E): void {
    if (this.#lru.peek(key) !== entry || next === entry) {
      return;
    }
    // Only if it fits beside the others: an entry was admitted at its size, and growing it (a page's
    // codings) must not evict others that admission kept — a scan would then evict by the back door.
    const bytes = this.#sizeOf(next, key);
    if (this.#lru.calculatedSize - this.#sizeOf(entry, key) + bytes > this.#lru.maxSize) {
      return;
    }
    this.#set(key, next, { ttl: lifetimeMs(next.policy), start: next.storedAt, size: bytes });
  }

  /**
   * Keeps an entry stored elsewhere (the shared tier) as it is, its age included; false if this
   * cache would not hold it (too large for it, already past its lifetime, or not admitted).
   */
  adopt(key: string, entry: E): boolean {
    const bytes = this.#sizeOf(entry, key);
    if (!this.#admits(key, entry, bytes)) {
      return false;
    }
    this.#set(key, entry, { ttl: lifetimeMs(entry.policy), start: entry.storedAt, size: bytes });
    return this.#lru.has(key);
  }

  delete(key: string): void {
    this.#lru.delete(key);
  }

  /** Marks the entry of `key` as one whose refresh failed: usable up to its stale-if-error. */
  refreshFailed(key: string): void {
    const entry = this.#lru.peek(key);
    if (entry !== undefined) {
      entry.refreshFailed = true;
    }
  }

  /**
   * The entry of a lookup that may answer in place of a production that failed or timed out: an
   * expired one while stale-if-error (RFC 5861) allows, a stale one (the asker wanted it refreshed
   * first); counted as such.
   */
  staleOnError(found: Lookup<E>): E | undefined {
    if (found.state === 'miss' || found.state === 'fresh') {
      return undefined;
    }
    if (found.state === 'expired' && !found.usableOnError) {
      return undefined;
    }
    this.#counts.staleOnError++;
    return found.entry;
  }

  /**
   * The entries stored before `at` whose path is one of `paths`, that declared one of `groups`, or
   * whose key is one of `keys`, are marked stale (`soft`) or deleted (`hard`). Returns how many.
   * Only the entries named are touched (entry-index.ts).
   */
  revalidate({ paths, groups, keys = [], mode, at }: Revalidation): number {
    this.#counts.revalidations++;
    const named = this.#index.keysOf(paths, groups);
    keys.forEach((key) => named.add(key));
    let affected = 0;
    for (const key of named) {
      const entry = this.held(key);
      if (entry === undefined || entry.storedAt > at) {
        continue;
      }
      affected++;
      if (mode === 'hard') {
        this.#lru.delete(key);
      } else {
        entry.revalidated = true;
      }
    }
    this.#counts.revalidatedEntries += affected;
    return affected;
  }

  /** The keys the entries of `paths` were made from (their `sources`), each once. */
  sourcesOf(paths: readonly string[]): string[] {
    const sources = new Set<string>();
    for (const key of this.#index.keysOf(paths, [])) {
      this.held(key)?.sources?.forEach((source) => sources.add(source));
    }
    return [...sources];
  }

  /**
   * Drops every entry whose key's path is `path` or, when `path` ends with `/`, starts with it
   * (keys are origin + path + query). Returns how many were dropped.
   */
  purge(path: string): number {
    let dropped = 0;
    const prefix = path.endsWith('/');
    for (const key of [...this.#lru.keys()]) {
      const keyPath = this.#pathOf(key);
      if (keyPath !== undefined && (prefix ? keyPath.startsWith(path) : keyPath === path)) {
        this.#lru.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  clear(): void {
    this.#lru.clear();
    this.#index.clear();
  }

  /** Sets an entry, indexed by its path and groups once lru-cache took it. */
  #set(key: string, entry: E, options: { ttl: number; size: number; start?: number }): void {
    this.#lru.set(key, entry, options);
    if (this.held(key) === entry) {
      this.#index.add(key, this.#pathOf(key), entry.groups);
    }
  }

  /**
   * Whether an entry may go in: always while it fits beside the others or replaces its own key's;
   * once it would evict another, with second-request admission, only when asked for again while a
   * stored copy would still have answered (fresh or within stale-while-revalidate). One larger
   * than the whole cache (`bytes`, what it would count) goes on to be refused as too large.
   */
  #admits(key: string, entry: E, bytes: number): boolean {
    if (
      bytes > this.#lru.maxSize ||
      this.held(key) !== undefined ||
      this.#fits(bytes) ||
      this.#secondRequest === undefined ||
      this.#secondRequest.admits(key, entry.policy.freshMs + entry.policy.staleWhileRevalidateMs)
    ) {
      return true;
    }
    this.#counts.deferred++;
    return false;
  }

  /**
   * Whether `bytes` more fit beside the entries still of use. One past its lifetime counts until
   * something touches it (lru-cache drops it lazily), and a cache full of those would turn new ones
   * away, or evict live ones for them: they go first, in a scan of every entry at most once a
   * second (PURGE_EXPIRED_EVERY_MS).
   */
  #fits(bytes: number): boolean {
    if (this.#lru.calculatedSize + bytes <= this.#lru.maxSize) {
      return true;
    }
    const now = this.#now();
    if (now - this.#purgedAt < PURGE_EXPIRED_EVERY_MS) {
      return false;
    }
    this.#purgedAt = now;
    this.#lru.purgeStale();
    return this.#lru.calculatedSize + bytes <= this.#lru.maxSize;
  }
}
