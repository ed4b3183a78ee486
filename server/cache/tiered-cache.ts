// A cache as a whole, in the shape of nitro's `defineCachedFunction`: handed a way to produce the
// entry of a key, it serves fresh entries from memory, stale ones while one background production
// refreshes them (stale-while-revalidate), stale ones in place of a production that failed
// (stale-if-error), and otherwise produces each key once, however many ask at once — in this
// process, and with a shared tier in every process that shares it. It knows nothing of what it
// keeps: pages (render-cache/page-cache.ts) and what renders fetch (data-cache/) are its users.
import type { Logger } from 'pino';
import { throttledWarning } from '../logger.ts';
import { type CacheName, channels, traced, tracedSync } from '../channels.ts';
import type { SkipReason } from '../redis/link.ts';
import { type CacheEntry, type CacheStatus, cacheStatusHeader } from './cache-status.ts';
import type { Lease, SharedTier } from './shared-tier.ts';
import type { Lookup, StoredEntry } from './entry.ts';
import type { EntryStore } from './store.ts';

/** An entry as its producer made it. */
export interface Produced<E extends StoredEntry, M = never> {
  /** As the store keeps it (its storedAt is set when stored). */
  entry: E;
  /** Shared caches may keep it; false: it is sent once, and an older one stops being served. */
  storable: boolean;
  /** The producer reported an error (a page may be broken): sent as it is, never stored. */
  failed: boolean;
  /** What making it took, for those who waited for it (a page: its render's timing). */
  made?: M;
}

/**
 * Produces the entry of a key: for a request (`signal`: it gave up) or, without one, a refresh.
 * `asker` is what the producer was handed with the request that asked (opaque here: the pages step
 * passes what a render does not see of it, for its warnings); undefined for a refresh.
 */
export type Produce<E extends StoredEntry, M = never> = (
  key: string,
  signal: AbortSignal | undefined,
  asker: unknown,
) => Promise<Produced<E, M>>;

/** An entry to send, and what the caches did to get it. */
export interface Served<E extends StoredEntry, M = never> {
  entry: E;
  status: CacheStatus;
  /** How old a stored entry is (the Age header); undefined for one produced for this request. */
  ageMs: number | undefined;
  /** What making it took, when it was made for this request (or one it waited with). */
  made?: M;
}

/** How a served entry came, in a word: for Server-Timing, traces and the data cache's counts. */
export type ServedOutcome = 'hit' | 'stale' | 'shared' | 'coalesced' | 'miss';

export function outcomeOf({ entry, status, ageMs }: Served<StoredEntry, unknown>): ServedOutcome {
  const { local, shared } = status;
  if (local.collapsed) {
    return 'coalesced';
  }
  if (local.fwdStatus !== undefined) {
    // A stale entry in place of a production that failed (stale-if-error).
    return 'stale';
  }
  if (local.hit) {
    return (ageMs ?? 0) >= entry.policy.freshMs || entry.revalidated ? 'stale' : 'hit';
  }
  return shared?.hit ? 'shared' : 'miss';
}

export interface TieredCacheOptions<E extends StoredEntry, M = never> {
  store: EntryStore<E>;
  /** The tier every process shares (Redis), asked on a miss here; undefined: this process alone. */
  shared: SharedTier<E> | undefined;
  produce: Produce<E, M>;
  /**
   * What an entry becomes once kept, here or in the shared tier (a page: compressed once, in every
   * stored coding); undefined: kept as produced.
   */
  finish?: (entry: E) => Promise<E>;
  /** How long a refresh waits for another process's production before producing it itself. */
  patienceMs: number;
  /** Which cache it is: the warnings' subject, and its spans' (observe/channels.ts). */
  cache: CacheName;
  log: Logger;
}

/** An entry for a miss here, and where it came from. */
interface Obtained<E extends StoredEntry, M> {
  entry: E;
  failed: boolean;
  /** The shared tier's Cache-Status entry; undefined without a shared tier. */
  shared: CacheEntry | undefined;
  storedHere: boolean;
  /** The age of an entry another process produced. */
  ageMs?: number;
  made?: M;
  /** A stale entry of the shared tier: to be refreshed. */
  stale?: boolean;
}

/** What a look in the shared tier found: an entry to use, why Redis was skipped, or neither. */
type SharedLook<E extends StoredEntry, M> =
  { obtained: Obtained<E, M> } | { skipped: SkipReason } | { wasStored: boolean };

/** How an entry produced here goes to the shared tier: its Cache-Status entry so far, and whether to store it. */
interface Sharing {
  entry: CacheEntry;
  store: boolean;
}

/** How often a process waiting for another's production looks again, should the announcement be lost. */
const LOOK_AGAIN_MS = 250;

export class TieredCache<E extends StoredEntry, M = never> {
  readonly #store: EntryStore<E>;
  readonly #shared: SharedTier<E> | undefined;
  readonly #produce: Produce<E, M>;
  readonly #finish: ((entry: E) => Promise<E>) | undefined;
  readonly #patienceMs: number;
  readonly #cache: CacheName;
  readonly #name: string;
  readonly #log: Logger;
  readonly #warnRefreshFailed: () => void;

  constructor({
    store,
    shared,
    produce,
    finish,
    patienceMs,
    cache,
    log,
  }: TieredCacheOptions<E, M>) {
    this.#store = store;
    this.#shared = shared;
    this.#produce = produce;
    this.#finish = finish;
    this.#patienceMs = patienceMs;
    this.#cache = cache;
    const name = `${cache} cache`;
    this.#name = name;
    this.#log = log;
    this.#warnRefreshFailed = throttledWarning(log, 'ORIGIN_CACHE_REFRESH_FAILED', {
      args: [name],
    });
  }

  /**
   * A fresh entry for `key` that `usable` accepts (a page: a 200), to answer before anything else
   * runs; undefined otherwise.
   */
  fresh(key: string, usable: (entry: E) => boolean = () => true): Served<E, M> | undefined {
    const peeked = this.#store.entries.peekFresh(key);
    if (peeked === undefined || !usable(peeked)) {
      return undefined;
    }
    const found = this.#store.entries.lookup(key);
    return found.state === 'fresh' ? fromStore(found.entry, found.ageMs) : undefined;
  }

  /**
   * The entry for a request: fresh or stale from memory, else obtained once per key. Rejects with
   * the signal's reason once it aborts, unless stale-if-error lets a stored entry answer instead
   * (as it does for a production that failed). `maxStaleMs`: the asker's own bound on staleness
   * (RFC 9111's `max-stale` request directive; a CDN refetching a page it would otherwise store
   * stale): a stale entry past it is not sent, the asker waits for the refresh that every stale
   * answer starts anyway, so it costs no production of its own. Undefined: the cache's own rules.
   */
  async serve(
    key: string,
    signal: AbortSignal,
    asker?: unknown,
    maxStaleMs?: number,
  ): Promise<Served<E, M>> {
    const found = this.#lookup(key);
    const takesStale = (entry: E, ageMs: number) => staleTaken(entry, ageMs, maxStaleMs);
    if (
      found.state === 'fresh' ||
      (found.state === 'stale' && takesStale(found.entry, found.ageMs))
    ) {
      if (found.state === 'stale') {
        this.#refreshInBackground(key);
      }
      return fromStore(found.entry, found.ageMs);
    }
    const fwd = found.state === 'miss' ? 'uri-miss' : 'stale';
    if (found.state === 'stale') {
      // The refresh this request waits for: joined, not doubled.
      this.#refreshInBackground(key);
    }
    const { result, collapsed, flight } = this.#store.productions.join(
      key,
      (all) =>
        traced(
          channels.cacheFill,
          () => ({ cache: this.#cache, flight: all }),
          () => this.#obtain(key, all, asker, takesStale),
        ),
      signal,
    );
    if (collapsed && channels.coalesced.hasSubscribers) {
      channels.coalesced.publish({ cache: this.#cache, flight });
    }
    return this.#served(key, result, { found, fwd, collapsed, signal });
  }

  /**
   * What a request that waited for a production gets: its entry; a stale one when it failed and
   * stale-if-error (or a refresh's stale entry) allows; else its failure.
   */
  async #served(
    key: string,
    result: Promise<Obtained<E, M>>,
    waited: { found: Lookup<E>; fwd: CacheEntry['fwd']; collapsed: boolean; signal: AbortSignal },
  ): Promise<Served<E, M>> {
    const { found, fwd, collapsed, signal } = waited;
    let obtained: Obtained<E, M>;
    try {
      obtained = await result;
    } catch (error) {
      // An error that says so (a response the producer passed on) is the answer, stale or not.
      const final = (error as { noStaleOnError?: boolean } | undefined)?.noStaleOnError === true;
      const stale = final ? undefined : this.#store.entries.staleOnError(found);
      if (stale === undefined || found.state === 'miss') {
        throw error;
      }
      const fwdStatus =
        error === signal.reason ? 504 : ((error as { status?: number }).status ?? 500);
      return staleInstead(stale, found.ageMs, fwd, fwdStatus);
    }
    if (obtained.failed && found.state === 'stale') {
      // A refresh that failed: the stale entry it was to replace is the better answer.
      return staleInstead(found.entry, found.ageMs, fwd, 500);
    }
    if (obtained.stale && !collapsed) {
      this.#refreshInBackground(key);
    }
    const local: CacheEntry = { fwd };
    if (obtained.storedHere && !collapsed) {
      local.stored = true;
    }
    if (collapsed) {
      local.collapsed = true;
    }
    return {
      entry: obtained.entry,
      status: { shared: obtained.shared, local },
      ageMs: obtained.ageMs,
      made: obtained.made,
    };
  }

  /**
   * The entry for an asker that may share no production with another (a request with credentials:
   * its answer may be its own): a fresh one stored here, else a production of its own, stored here
   * (never in the shared tier) when its producer says it may be; stale-if-error as for any.
   */
  async serveAlone(key: string, signal: AbortSignal, asker: unknown): Promise<Served<E, M>> {
    const found = this.#lookup(key);
    if (found.state === 'fresh') {
      return fromStore(found.entry, found.ageMs);
    }
    const fwd = found.state === 'miss' ? 'uri-miss' : 'stale';
    return this.#served(key, this.#produceHere(key, signal, asker, undefined), {
      found,
      fwd,
      collapsed: false,
      signal,
    });
  }

  /** The key's entry in this process's store, as a span of its own when traced. */
  #lookup(key: string): Lookup<E> {
    return tracedSync(
      channels.cacheLookup,
      () => ({ cache: this.#cache, tier: 'memory' as const }),
      (message) => {
        const looked = this.#store.entries.lookup(key);
        if (message !== undefined) {
          message.state = looked.state;
        }
        return looked;
      },
    );
  }

  /**
   * The entry for a miss in this process: from the shared tier when there is one (a stale one only
   * if `takesStale` says so), else produced here. A refresh (`signal` undefined) takes no stale one.
   */
  #obtain(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    takesStale: (entry: E, ageMs: number) => boolean = () => signal !== undefined,
  ): Promise<Obtained<E, M>> {
    return this.#shared === undefined
      ? this.#produceHere(key, signal, asker, undefined)
      : this.#throughSharedTier(key, signal, asker, takesStale);
  }

  /**
   * The shared tier's entry when it holds a usable one; else one process of all that share it
   * produces the entry under the tier's lock while the others wait for it (bounded by `signal`, or
   * for a refresh by patienceMs), producing it themselves only if it never comes. A refresh
   * (`signal` undefined) wants an entry newer than the stale one it replaces.
   */
  async #throughSharedTier(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    takesStale: (entry: E, ageMs: number) => boolean,
  ): Promise<Obtained<E, M>> {
    const shared = this.#shared!;
    const patience = signal ?? AbortSignal.timeout(this.#patienceMs);
    let wasStored = false;
    for (let waited = false; ; waited = true) {
      const looked = await this.#lookShared(key, takesStale, waited);
      if (!('wasStored' in looked)) {
        return 'obtained' in looked
          ? looked.obtained
          : this.#produceBypassing(key, signal, asker, looked);
      }
      wasStored ||= looked.wasStored;
      const lock = await shared.lock(key);
      if ('skipped' in lock) {
        return this.#produceBypassing(key, signal, asker, lock);
      }
      if ('lease' in lock) {
        return this.#produceUnderLock(key, signal, asker, lock.lease, {
          wasStored,
          waited,
          takesStale,
        });
      }
      // Another process produces it: wait for its announcement, then look again.
      await shared.producedElsewhere(key, LOOK_AGAIN_MS, patience);
      if (patience.aborted) {
        if (signal !== undefined) {
          throw signal.reason;
        }
        // A refresh whose producer never delivered: produce it here after all.
        return this.#produceHere(key, signal, asker, { entry: { fwd: 'stale' }, store: true });
      }
    }
  }

  /** Produces the entry holding the shared tier's lock for it, and stores it there for everyone. */
  async #produceUnderLock(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    lease: Lease,
    {
      wasStored,
      waited,
      takesStale,
    }: { wasStored: boolean; waited: boolean; takesStale: (entry: E, ageMs: number) => boolean },
  ): Promise<Obtained<E, M>> {
    try {
      // Looks again under the lock: the last holder may have stored the entry and let go between
      // our lookup and our lock: pages were rendered twice without it (docs/architecture.md#what-each-optimization-saves).
      const looked = await this.#lookShared(key, takesStale, waited);
      if (!('wasStored' in looked)) {
        return 'obtained' in looked
          ? looked.obtained
          : this.#produceBypassing(key, signal, asker, looked);
      }
      const fwd = wasStored || looked.wasStored ? 'stale' : 'uri-miss';
      return await this.#produceHere(key, signal, asker, { entry: { fwd }, store: true });
    } finally {
      await lease.release();
    }
  }

  /** The shared tier's entry for `key` if it may answer (a stale one only if `takesStale` says so). */
  async #lookShared(
    key: string,
    takesStale: (entry: E, ageMs: number) => boolean,
    collapsed: boolean,
  ): Promise<SharedLook<E, M>> {
    const shared = this.#shared!;
    const lookup = await traced(
      channels.cacheLookup,
      () => ({ cache: this.#cache, tier: 'shared' as const }),
      async (message) => {
        const got = await shared.get(key);
        if (message !== undefined) {
          message.state =
            'skipped' in got ? got.skipped : got.found === undefined ? 'miss' : 'found';
        }
        return got;
      },
    );
    if ('skipped' in lookup) {
      return lookup;
    }
    const entry = lookup.found;
    if (entry === undefined) {
      return { wasStored: false };
    }
    // Stored there before a revalidation this process applied: gone (hard) or stale (soft), here
    // as everywhere else, even while Redis still holds it.
    const outdated = this.#store.outdated(key, entry);
    if (outdated === 'hard') {
      return { wasStored: true };
    }
    if (outdated === 'soft') {
      entry.revalidated = true;
    }
    const found = this.#store.entries.freshness(entry);
    const { state } = found;
    if (
      state === 'miss' ||
      state === 'expired' ||
      (state === 'stale' && !takesStale(entry, found.ageMs))
    ) {
      return { wasStored: true };
    }
    const { ageMs } = found;
    shared.countHit(state === 'stale');
    const status: CacheEntry = { hit: true, ttl: ttlSeconds(entry, ageMs) };
    if (collapsed) {
      status.collapsed = true;
    }
    const storedHere = this.#store.entries.adopt(key, entry);
    return {
      obtained: {
        entry,
        failed: false,
        shared: status,
        storedHere,
        ageMs: ageSent(entry, ageMs),
        stale: state === 'stale',
      },
    };
  }

  /** Produces here without the shared tier, which was skipped (Redis down, slow, breaker open). */
  #produceBypassing(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    { skipped }: { skipped: SkipReason },
  ): Promise<Obtained<E, M>> {
    return this.#produceHere(key, signal, asker, {
      entry: { fwd: 'bypass', detail: skipped },
      store: false,
    });
  }

  /**
   * Produces the entry here, stores it in this process and, when `sharing` says so, in the shared
   * tier. An entry kept is finished once (a page: compressed once, in every stored coding), and only
   * once kept: one the cache turns away (admission) is never finished for storing (a page goes out
   * compressed on its way instead). This request and the shared tier get the finished entry.
   */
  async #produceHere(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    sharing: Sharing | undefined,
  ): Promise<Obtained<E, M>> {
    const since = this.#store.entries.now();
    const produced = await this.#produce(key, signal, asker);
    const { kept, outdated } = this.#keep(key, produced, since);
    const storedHere = kept !== undefined && this.#store.entries.peek(key) === kept;
    const toShare = sharing !== undefined && sharing.store && kept !== undefined;
    const entry = storedHere || toShare ? await this.#finished(key, kept) : produced.entry;
    const shared = toShare ? await this.#share(key, entry, sharing.entry) : sharing?.entry;
    // A revalidation applied here since it was kept (while it was finished or shared) makes it old too.
    const late = kept !== undefined && this.#store.outdated(key, entry) !== undefined;
    return {
      entry,
      failed: produced.failed,
      shared,
      storedHere,
      made: produced.made,
      // Made from before a revalidation of it: sent stale, so that no cache downstream keeps it as new.
      ageMs: outdated || late ? entry.policy.freshMs : undefined,
    };
  }

  /** The entry as finish() makes it, given to this process's copy as soon as it is made. */
  async #finished(key: string, entry: E): Promise<E> {
    if (this.#finish === undefined) {
      return entry;
    }
    try {
      const finished = await this.#finish(entry);
      this.#store.entries.replace(key, entry, finished);
      return finished;
    } catch (error) {
      // The entry stays as it was (a page: compressed as it goes out).
      this.#log.debug({ err: error, key }, `${this.#name}: finishing an entry failed`);
      return entry;
    }
  }

  /**
   * Stores an entry in the shared tier; its Cache-Status entry says how that went. A revalidation
   * applied here while it was finished (a page: compressed) already ran in Redis, before this
   * entry was there: a hard one keeps it out, a soft one stores it stale.
   */
  async #share(key: string, entry: E, status: CacheEntry): Promise<CacheEntry> {
    const outdated = this.#store.outdated(key, entry);
    if (outdated === 'hard') {
      return { ...status, detail: 'not-stored-revalidated' };
    }
    if (outdated === 'soft') {
      entry.revalidated = true;
    }
    const outcome = await this.#shared!.put(key, entry);
    if (outcome === 'stored') {
      return { ...status, stored: true };
    }
    return { ...status, detail: outcome === 'too-large' ? 'too-large' : `not-stored-${outcome}` };
  }

  /**
   * Stores an entry shared caches may keep (`kept`: the entry for the caches, which this process's
   * may have deferred: the shared tier bounds its own memory), never after a hard revalidation.
   * `outdated`: a revalidation of it came while it was produced (from `since`), so it is stale
   * already (soft) or kept nowhere (hard). An entry no longer shareable is not served again; a
   * failed one changes nothing.
   */
  #keep(key: string, produced: Produced<E, M>, since: number): { kept?: E; outdated: boolean } {
    if (produced.failed) {
      return { outdated: false };
    }
    if (!produced.storable) {
      // It may no longer be shared (a refresh said private, say): stop serving the old one.
      this.#store.entries.delete(key);
      return { outdated: false };
    }
    const { entry } = produced;
    entry.storedAt = 0;
    entry.refreshFailed = false;
    if (this.#store.store(key, entry, since) === 'revalidated') {
      return { outdated: true };
    }
    return { kept: entry, outdated: entry.revalidated === true };
  }

  /** Serves a stale entry now; one background production brings it up to date. */
  #refreshInBackground(key: string): void {
    this.#store.refresh(
      key,
      // Its own trace, linked to the request that found the entry stale.
      (flight) =>
        traced(
          channels.cacheRefresh,
          () => ({ cache: this.#cache, flight }),
          () => this.#obtain(key, undefined, undefined),
        ),
      (error) => {
        this.#warnRefreshFailed();
        this.#log.debug({ err: error, key }, `${this.#name}: refresh failed`);
      },
      // A failed refresh: stale-if-error keeps serving the last good entry.
      ({ failed }) => (failed ? new Error('the producer reported an error') : undefined),
    );
  }
}

/**
 * Whether an asker takes a stale entry: by the cache's own rules (no `maxStaleMs`), or within its
 * bound; one revalidated on demand is stale by any bound, whatever its age.
 */
function staleTaken(entry: StoredEntry, ageMs: number, maxStaleMs: number | undefined): boolean {
  if (maxStaleMs === undefined) {
    return true;
  }
  return !entry.revalidated && ageMs - entry.policy.freshMs <= maxStaleMs;
}

/** A stale entry answering in place of a production that failed (stale-if-error). */
function staleInstead<E extends StoredEntry, M>(
  stale: E,
  ageMs: number,
  fwd: CacheEntry['fwd'],
  fwdStatus: number,
): Served<E, M> {
  return {
    entry: stale,
    status: { local: { fwd, fwdStatus, ttl: ttlSeconds(stale, ageMs) } },
    ageMs: ageSent(stale, ageMs),
  };
}

/** The headers a served entry adds to its answer: its Age, when stored, and Cache-Status. */
export function servedHeaders({ status, ageMs }: Served<StoredEntry, unknown>): string[] {
  const headers = ageMs === undefined ? [] : ['Age', String(Math.floor(ageMs / 1000))];
  headers.push(...cacheStatusHeader(status));
  return headers;
}

/** An entry of this process's store, as served: a hit, revalidated (RFC 9211's detail) if so. */
function fromStore<E extends StoredEntry, M>(entry: E, ageMs: number): Served<E, M> {
  const local: CacheEntry = { hit: true, ttl: ttlSeconds(entry, ageMs) };
  if (entry.revalidated) {
    // Why an entry still within its max-age is stale: it was revalidated.
    local.detail = 'revalidated';
  }
  return { entry, status: { local }, ageMs: ageSent(entry, ageMs) };
}

/**
 * The age a stored entry is sent with: its own, or for a entry revalidated on demand (stale before
 * its time) at least its freshness lifetime, so that a cache behind it computes it stale too (RFC
 * 9111 §4.2.3) instead of keeping the old entry as fresh for the rest of its s-maxage.
 */
function ageSent(entry: StoredEntry, ageMs: number): number {
  return entry.revalidated ? Math.max(ageMs, entry.policy.freshMs) : ageMs;
}

/** Seconds of freshness left, negative once stale (RFC 9211 §2.5): what s-maxage less the Age sent gives. */
function ttlSeconds(entry: StoredEntry, ageMs: number): number {
  const ttl = (entry.policy.freshMs - Math.floor(ageMs / 1000) * 1000) / 1000;
  // A revalidated entry has no freshness left, whatever its age.
  return entry.revalidated ? Math.min(ttl, 0) : ttl;
}
