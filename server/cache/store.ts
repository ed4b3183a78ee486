// The core of the origin's caches, whatever they keep (pages: render-cache/, what renders fetch:
// data-cache/): entries by key, bounded in bytes, with how long each may be used, the productions
// in flight per key (one per key however many ask), and on-demand revalidation by path or group.
// The store keeps its own statistics; when to produce an entry and what to serve is tiered-cache.ts.
import { LRUCache } from 'lru-cache';
import { untilAborted } from '../until-aborted.ts';
import { type Admission, SecondRequestFilter } from './admission.ts';
import { EntryIndex } from './entry-index.ts';
import { RevalidationMemory } from './revalidation-memory.ts';
import type { Revalidation, RevalidationMode } from './revalidation.ts';

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

/** What the store knows of every entry, whatever else its user keeps in it. */
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
 * - `expired`: produce it; if that fails, `page` may still answer while stale-if-error allows.
 * - `miss`: nothing stored.
 */
export type Lookup<E extends StoredEntry> =
  | { state: 'fresh' | 'stale'; page: E; ageMs: number }
  | { state: 'expired'; page: E; ageMs: number; usableOnError: boolean }
  | { state: 'miss' };

export interface StoreStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  /** Stale pages sent within stale-while-revalidate. */
  staleServed: number;
  /** Stale pages sent because their render failed or timed out (stale-if-error). */
  staleOnError: number;
  coalescedWaits: number;
  refreshes: number;
  refreshFailures: number;
  /** Revalidations applied here (whoever asked), and the pages they marked stale or deleted. */
  revalidations: number;
  revalidatedPages: number;
  /** New pages not stored because the cache was full and they were asked for the first time. */
  deferred: number;
}

/**
 * What storing a page came to: `deferred` when the cache is full and the page is new (see
 * Admission), `too-large` for a page larger than the whole cache, `revalidated` when a hard
 * revalidation came while it rendered (keep it nowhere).
 */
export type StoreOutcome = 'stored' | 'deferred' | 'too-large' | 'revalidated';

export interface StoreSettings {
  /** Bytes of entries it holds (RENDER_CACHE_BYTES, DATA_CACHE_BYTES). */
  maxBytes: number;
  /** Which new entries a full cache takes (RENDER_CACHE_ADMISSION); `second` unless said otherwise. */
  admission?: Admission;
  /** The cache's clock (tests move their own). */
  now?: () => number;
}

export interface StoreOptions<E extends StoredEntry> extends StoreSettings {
  /** What an entry counts against maxBytes: everything it holds, its key and bookkeeping. */
  sizeOf: (entry: E, key: string) => number;
  /** The URL path of a key, for revalidation and purges by path; undefined: keys have none. */
  pathOf?: (key: string) => string | undefined;
  /** What a soft revalidation makes of an entry; `stale` unless said otherwise. */
  soft?: SoftRevalidation;
}

/** A render for a key and the requests waiting for it. */
interface Flight<T> {
  result: Promise<T>;
  controller: AbortController;
  waiters: number;
  /** When it began (the cache's clock): a revalidation after this may postdate what it read. */
  startedAt: number;
}

/**
 * How often, at most, a full cache scans for pages past their lifetime (see EntryStore#fits): a
 * scan of every entry is too dear to run on every miss of a scan of new ids (bench/README.md#the-figures-behind-the-codes-comments).
 */
const PURGE_EXPIRED_EVERY_MS = 1000;

/** The keys a full cache remembers for second-request admission: a sixteenth of its bytes. */
const ADMISSION_MEMORY_SHARE = 16;
/** …but room for a few hundred keys however small the cache. */
const MIN_ADMISSION_MEMORY_BYTES = 64 * 1024;

/**
 * Entries by cache key, bounded in bytes (least recently used out first, by lru-cache), with the
 * productions in flight per key so that concurrent misses produce once.
 */
export class EntryStore<E extends StoredEntry> {
  readonly #pages: LRUCache<string, E>;
  readonly #sizeOf: (entry: E, key: string) => number;
  readonly #pathOf: (key: string) => string | undefined;
  readonly #soft: SoftRevalidation;
  /** The stored keys by group and path: what a revalidation touches (entry-index.ts). */
  readonly #index = new EntryIndex();
  readonly #inFlight = new Map<string, Flight<unknown>>();
  /** When each path, group and key was last revalidated: for productions that began before. */
  readonly #revalidations = new RevalidationMemory();
  readonly #now: () => number;
  /** When #fits last dropped the pages past their lifetime (the cache's clock). */
  #purgedAt = -Infinity;
  /** Undefined with `first` admission. */
  readonly #secondRequest: SecondRequestFilter | undefined;
  readonly #stats = {
    hits: 0,
    misses: 0,
    staleServed: 0,
    staleOnError: 0,
    coalescedWaits: 0,
    refreshes: 0,
    refreshFailures: 0,
    revalidations: 0,
    revalidatedPages: 0,
    deferred: 0,
  };

  constructor({
    maxBytes,
    admission = 'second',
    now = Date.now,
    sizeOf,
    pathOf = () => undefined,
    soft = 'stale',
  }: StoreOptions<E>) {
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
    this.#pages = new LRUCache<string, E>({
      maxSize: maxBytes,
      // store and adopt pass the size they computed for admission; this is for any other set.
      sizeCalculation: sizeOf,
      // Time is the cache's own clock (tests advance it); entries go once no rule can use them.
      perf: { now },
      // Read the clock on every check: its default caches it for 1 ms, behind a clock tests move.
      ttlResolution: 0,
      // However an entry goes (deleted, evicted, expired, replaced), its index entries go with it.
      dispose: (entry, key) => this.#index.remove(key, this.#pathOf(key), entry.groups),
    });
  }

  get stats(): StoreStats {
    return {
      entries: this.#pages.size,
      bytes: this.#pages.calculatedSize,
      maxBytes: this.#pages.maxSize,
      ...this.#stats,
    };
  }

  lookup(key: string): Lookup<E> {
    const page = this.#pages.get(key);
    if (page === undefined) {
      this.#stats.misses++;
      return { state: 'miss' };
    }
    const found = freshness(page, this.#now(), this.#soft);
    if (found.state === 'fresh') {
      this.#stats.hits++;
    } else if (found.state === 'stale') {
      this.#stats.staleServed++;
    } else {
      this.#stats.misses++;
    }
    return found;
  }

  /** The page for `key` if it is fresh, without counting or reordering anything (a cheap pre-check). */
  peekFresh(key: string): E | undefined {
    const page = this.#pages.peek(key);
    return page !== undefined &&
      !page.revalidated &&
      this.#now() - page.storedAt < page.policy.freshMs
      ? page
      : undefined;
  }

  /** The store's clock: when a production began, for store(). */
  now(): number {
    return this.#now();
  }

  /**
   * Keeps `page` for `key` from now on (its storedAt is set here, by the cache's clock), if the
   * cache admits it. `producedSince`: when the production that made it began (the store's clock;
   * by default, when the key's render in flight began); a revalidation of it since then makes it
   * stored stale (soft), or not at all (`revalidated`: hard, so it must not be kept anywhere).
   */
  store(key: string, page: E, producedSince = this.#inFlight.get(key)?.startedAt): StoreOutcome {
    page.storedAt = this.#now();
    const missed =
      producedSince === undefined ? undefined : this.#revalidationSince(key, producedSince, page);
    if (missed === 'hard') {
      // Rendered from before a hard revalidation: never served; the next request renders anew.
      this.#pages.delete(key);
      return 'revalidated';
    }
    page.revalidated = missed === 'soft';
    const bytes = this.#sizeOf(page, key);
    if (!this.#admits(key, page, bytes)) {
      return 'deferred';
    }
    // Kept while some rule can still use it, and not a moment longer. lru-cache refuses an entry
    // larger than the whole cache (and drops what the key held).
    this.#set(key, page, { ttl: lifetimeMs(page.policy), size: bytes });
    return bytes > this.#pages.maxSize ? 'too-large' : 'stored';
  }

  /**
   * Replaces the entry stored for `key` by `next`, the same content made otherwise (a page with its
   * stored codings: compressed once), counted in its bytes, if `entry` is still what the key holds
   * and `next` fits. Its expiry stays: the lifetime counts from when it was stored.
   */
  replace(key: string, entry: E, next: E): void {
    if (this.#pages.peek(key) !== entry || next === entry) {
      return;
    }
    // Only if it fits beside the others: an entry was admitted at its size, and growing it (a page's
    // codings) must not evict others that admission kept — a scan would then evict by the back door.
    const bytes = this.#sizeOf(next, key);
    if (this.#pages.calculatedSize - this.#sizeOf(entry, key) + bytes > this.#pages.maxSize) {
      return;
    }
    this.#set(key, next, { ttl: lifetimeMs(next.policy), start: next.storedAt, size: bytes });
  }

  /** The page stored for `key`, whatever its state, without counting or reordering anything. */
  peek(key: string): E | undefined {
    return this.#pages.peek(key);
  }

  /**
   * Whether an entry stored elsewhere (the shared tier) predates a revalidation this process
   * applied that names it, and how: such an entry must not come back in (a revalidation applied
   * here before it reached Redis, or while another process stored an old entry there).
   */
  outdated(key: string, entry: E): RevalidationMode | undefined {
    return this.#revalidations.since(entry.storedAt, key, this.#pathOf(key), entry.groups);
  }

  /**
   * Keeps a page stored elsewhere (the shared tier) as it is, its age included; false if this
   * cache would not hold it (too large for it, already past its lifetime, or not admitted).
   */
  adopt(key: string, page: E): boolean {
    const bytes = this.#sizeOf(page, key);
    if (!this.#admits(key, page, bytes)) {
      return false;
    }
    this.#set(key, page, { ttl: lifetimeMs(page.policy), start: page.storedAt, size: bytes });
    return this.#pages.has(key);
  }

  /** Sets an entry, indexed by its path and groups once lru-cache took it. */
  #set(key: string, entry: E, options: { ttl: number; size: number; start?: number }): void {
    this.#pages.set(key, entry, options);
    if (this.#pages.peek(key, { allowStale: true }) === entry) {
      this.#index.add(key, this.#pathOf(key), entry.groups);
    }
  }

  /** What an entry can answer now, by its policy and this store's reading of a soft revalidation. */
  freshness(entry: E, now = this.#now()): Lookup<E> {
    return freshness(entry, now, this.#soft);
  }

  /**
   * Whether a page may go in: always while it fits beside the others or replaces its own key's;
   * once it would evict another, with second-request admission, only when asked for again while a
   * stored copy would still have answered (fresh or within stale-while-revalidate). One larger
   * than the whole cache (`bytes`, what it would count) goes on to be refused as too large.
   */
  #admits(key: string, page: E, bytes: number): boolean {
    if (
      bytes > this.#pages.maxSize ||
      this.#pages.peek(key, { allowStale: true }) !== undefined ||
      this.#fits(bytes) ||
      this.#secondRequest === undefined ||
      this.#secondRequest.admits(key, page.policy.freshMs + page.policy.staleWhileRevalidateMs)
    ) {
      return true;
    }
    this.#stats.deferred++;
    return false;
  }

  /**
   * Whether `bytes` more fit beside the pages still of use. A page past its lifetime counts until
   * something touches it (lru-cache drops it lazily), and a cache full of those would turn new pages
   * away, or evict live ones for them: they go first, in a scan of every entry at most once a
   * second (PURGE_EXPIRED_EVERY_MS).
   */
  #fits(bytes: number): boolean {
    if (this.#pages.calculatedSize + bytes <= this.#pages.maxSize) {
      return true;
    }
    const now = this.#now();
    if (now - this.#purgedAt < PURGE_EXPIRED_EVERY_MS) {
      return false;
    }
    this.#purgedAt = now;
    this.#pages.purgeStale();
    return this.#pages.calculatedSize + bytes <= this.#pages.maxSize;
  }

  delete(key: string): void {
    this.#pages.delete(key);
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
    this.#stats.staleOnError++;
    return found.page;
  }

  /**
   * Runs `render` for `key` unless a render for it is already running, in which case the caller
   * waits for that one and gets its result or its failure (`collapsed` says which happened). Each
   * caller stops waiting when its own `signal` aborts (`result` rejects with its reason); `render`
   * gets a signal that aborts once every caller's has: a render nobody waits for any more leaves
   * the queue like any other. A render that began before a revalidation that names its key is not
   * joined (it may hold what was revalidated): this caller starts another.
   */
  render<T>(
    key: string,
    render: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): { result: Promise<T>; collapsed: boolean; flight: object } {
    const collapsed = this.#joinable(key) !== undefined;
    const flight = this.#flight(key, render);
    if (collapsed) {
      this.#stats.coalescedWaits++;
    }
    if (flight.waiters !== Infinity) {
      flight.waiters++;
      signal.addEventListener(
        'abort',
        () => {
          if (--flight.waiters === 0) {
            flight.controller.abort(signal.reason);
          }
        },
        { once: true },
      );
    }
    // The render's own signal names it for the spans of those who wait on it (observe/).
    return {
      result: untilAborted(flight.result, signal),
      collapsed,
      flight: flight.controller.signal,
    };
  }

  /**
   * Brings a stale entry up to date in the background, unless a render for it is already running:
   * no request waits for it, and nothing aborts it. If it fails, the entry stays usable up to its
   * stale-if-error and `onFailure` hears why.
   */
  refreshInBackground<T>(
    key: string,
    render: (flight: object) => Promise<T>,
    onFailure: (error: unknown) => void,
    failed: (result: T) => unknown = () => undefined,
  ): void {
    if (this.#joinable(key) !== undefined) {
      return;
    }
    this.#stats.refreshes++;
    const flight = this.#flight(key, render);
    flight.waiters = Infinity;
    const fail = (error: unknown) => {
      this.#stats.refreshFailures++;
      const page = this.#pages.peek(key);
      if (page !== undefined) {
        page.refreshFailed = true;
      }
      onFailure(error);
    };
    // A request that finds nothing stored meanwhile joins the refresh and gets its result, which
    // may be a page and still a failure (`failed` says why: the app reported an error, say).
    flight.result.then((result) => {
      const why = failed(result);
      if (why !== undefined) {
        fail(why);
      }
    }, fail);
  }

  /** Whether a render for `key` is running. */
  rendering(key: string): boolean {
    return this.#inFlight.has(key);
  }

  /** The render in flight for `key` that a new asker may join: none that began before a revalidation of it. */
  #joinable(key: string): Flight<unknown> | undefined {
    const running = this.#inFlight.get(key);
    return running === undefined || this.#revalidationSince(key, running.startedAt) !== undefined
      ? undefined
      : running;
  }

  /** The render in flight for `key` that may be joined, or a new one started with `render`. */
  #flight<T>(key: string, render: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const running = this.#joinable(key) as Flight<T> | undefined;
    if (running !== undefined) {
      return running;
    }
    const controller = new AbortController();
    const startedAt = this.#now();
    const flight: Flight<T> = {
      result: render(controller.signal),
      controller,
      waiters: 0,
      startedAt,
    };
    this.#inFlight.set(key, flight);
    const done = () => {
      if (this.#inFlight.get(key) === flight) {
        this.#inFlight.delete(key);
      }
    };
    flight.result.then(done, done);
    return flight;
  }

  /**
   * Drops every page whose key's path is `path` or, when `path` ends with `/`, starts with it
   * (keys are origin + path + query). Returns how many were dropped.
   */
  purge(path: string): number {
    let dropped = 0;
    const prefix = path.endsWith('/');
    for (const key of [...this.#pages.keys()]) {
      const keyPath = this.#pathOf(key);
      if (keyPath !== undefined && (prefix ? keyPath.startsWith(path) : keyPath === path)) {
        this.#pages.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * The strongest revalidation since `startedAt` that names `key` (by its path, its key, or a group
   * of `entry`: the one a render made, else what is stored for it now), if any: a render that began
   * before it may hold what it was about. With no entry to read groups from, any revalidation by
   * group counts.
   */
  #revalidationSince(key: string, startedAt: number, entry?: E): RevalidationMode | undefined {
    const known = entry ?? this.#pages.peek(key, { allowStale: true });
    return this.#revalidations.since(startedAt, key, this.#pathOf(key), known?.groups);
  }

  /**
   * On-demand revalidation: the entries stored before `at` whose path is one of `paths`, that
   * declared one of `groups`, or whose key is one of `keys`, are marked stale (`soft`) or deleted
   * (`hard`). Returns how many. Only the entries named are touched (entry-index.ts).
   */
  revalidate({ paths, groups, keys = [], mode, at }: Revalidation): number {
    this.#stats.revalidations++;
    this.#revalidations.add({ paths, groups, keys, mode, at });
    const named = this.#index.keysOf(paths, groups);
    keys.forEach((key) => named.add(key));
    let affected = 0;
    for (const key of named) {
      const entry = this.#pages.peek(key, { allowStale: true });
      if (entry === undefined || entry.storedAt > at) {
        continue;
      }
      affected++;
      if (mode === 'hard') {
        this.#pages.delete(key);
      } else {
        entry.revalidated = true;
      }
    }
    this.#stats.revalidatedPages += affected;
    return affected;
  }

  /** The keys the entries of `paths` were made from (their `sources`), each once. */
  sourcesOf(paths: readonly string[]): string[] {
    const sources = new Set<string>();
    for (const key of this.#index.keysOf(paths, [])) {
      this.#pages
        .peek(key, { allowStale: true })
        ?.sources?.forEach((source) => sources.add(source));
    }
    return [...sources];
  }

  clear(): void {
    this.#pages.clear();
    this.#index.clear();
  }
}

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
  page: E,
  now: number,
  soft: SoftRevalidation = 'stale',
): Lookup<E> {
  const ageMs = Math.max(0, now - page.storedAt);
  const { freshMs, staleWhileRevalidateMs, staleIfErrorMs } = page.policy;
  if (page.revalidated) {
    return soft === 'stale'
      ? { state: 'stale', page, ageMs }
      : { state: 'expired', page, ageMs, usableOnError: ageMs < freshMs + staleIfErrorMs };
  }
  if (ageMs < freshMs) {
    return { state: 'fresh', page, ageMs };
  }
  const staleWindow = Math.max(staleWhileRevalidateMs, page.refreshFailed ? staleIfErrorMs : 0);
  if (ageMs < freshMs + staleWindow) {
    return { state: 'stale', page, ageMs };
  }
  return { state: 'expired', page, ageMs, usableOnError: ageMs < freshMs + staleIfErrorMs };
}
