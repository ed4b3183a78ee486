// The render cache as a whole, in the shape of nitro's `defineCachedFunction`: handed a way to
// produce the page of a key, it serves fresh pages from memory, stale ones while one background
// production refreshes them (stale-while-revalidate), stale ones in place of a production that
// failed (stale-if-error), and otherwise produces each key once, however many requests ask at once
// — in this process, and with a shared tier in every process that shares it. It knows nothing of
// Angular: the pages step (pages/pages.ts) hands it `produce`.
import type { Logger } from 'pino';
import type { Answer } from '../http/answer.ts';
import { encodedForStore } from '../http/encodings.ts';
import { throttledWarning } from '../logger.ts';
import type { SkipReason } from '../redis/link.ts';
import { type CacheEntry, type CacheStatus, cacheStatusHeader } from './cache-status.ts';
import type { SharedCachePolicy } from './policy.ts';
import type { Lease, SharedTier } from './shared-tier.ts';
import { type CachedPage, freshness, type RenderCache } from './store.ts';

/** A page as its producer made it. */
export interface Produced {
  answer: Answer;
  /** The cache groups (RFC 9875) it declared. */
  groups: readonly string[];
  /** How long shared caches may use it; undefined: it must not be stored (its answer says so). */
  policy: SharedCachePolicy | undefined;
  /** The producer reported an error (the page may be broken): sent as it is, never stored. */
  failed: boolean;
}

/**
 * Produces the page of a key: for a request (`signal`: it gave up) or, without one, a refresh.
 * `asker` is what the producer was handed with the request that asked (opaque here: the pages step
 * passes what a render does not see of it, for its warnings); undefined for a refresh.
 */
export type Produce = (
  key: string,
  signal: AbortSignal | undefined,
  asker: unknown,
) => Promise<Produced>;

/** A page to send, and what the caches did to get it. */
export interface Served {
  answer: Answer;
  status: CacheStatus;
  /** How old a stored page is (the Age header); undefined for one produced for this request. */
  ageMs: number | undefined;
}

export interface PageCacheOptions {
  store: RenderCache;
  /** The tier every process shares (Redis), asked on a miss here; undefined: this process alone. */
  shared: SharedTier | undefined;
  produce: Produce;
  /** How long a refresh waits for another process's production before producing it itself. */
  patienceMs: number;
  log: Logger;
}

/** A page for a miss here, and where it came from. */
interface Obtained {
  answer: Answer;
  failed: boolean;
  /** The shared tier's Cache-Status entry; undefined without a shared tier. */
  shared: CacheEntry | undefined;
  storedHere: boolean;
  /** The age of a page another process produced. */
  ageMs?: number;
  /** A stale page of the shared tier: to be refreshed. */
  stale?: boolean;
}

/** What a look in the shared tier found: a page to use, why Redis was skipped, or neither. */
type SharedLook = { obtained: Obtained } | { skipped: SkipReason } | { wasStored: boolean };

/** How a page produced here goes to the shared tier: its entry so far, and whether to store it. */
interface Sharing {
  entry: CacheEntry;
  store: boolean;
}

/** How often a process waiting for another's production looks again, should the announcement be lost. */
const LOOK_AGAIN_MS = 250;

export class PageCache {
  readonly #store: RenderCache;
  readonly #shared: SharedTier | undefined;
  readonly #produce: Produce;
  readonly #patienceMs: number;
  readonly #log: Logger;
  readonly #warnRefreshFailed: () => void;

  constructor({ store, shared, produce, patienceMs, log }: PageCacheOptions) {
    this.#store = store;
    this.#shared = shared;
    this.#produce = produce;
    this.#patienceMs = patienceMs;
    this.#log = log;
    this.#warnRefreshFailed = throttledWarning(
      log,
      'render cache: a refresh failed, the stale page is served meanwhile',
    );
  }

  /** A fresh 200 page for `key`, to answer before anything else runs; undefined otherwise. */
  fresh(key: string): Served | undefined {
    if (this.#store.peekFresh(key)?.answer.status !== 200) {
      return undefined;
    }
    const found = this.#store.lookup(key);
    return found.state === 'fresh' ? fromStore(found.page, found.ageMs) : undefined;
  }

  /**
   * The page for a request: fresh or stale from memory, else obtained once per key. Rejects with
   * the signal's reason once it aborts, unless stale-if-error lets a stored page answer instead
   * (as it does for a production that failed).
   */
  async serve(key: string, signal: AbortSignal, asker?: unknown): Promise<Served> {
    const found = this.#store.lookup(key);
    if (found.state === 'fresh' || found.state === 'stale') {
      if (found.state === 'stale') {
        this.#refreshInBackground(key);
      }
      return fromStore(found.page, found.ageMs);
    }
    const fwd = found.state === 'miss' ? 'uri-miss' : 'stale';
    const { result, collapsed } = this.#store.render(
      key,
      (all) => this.#obtain(key, all, asker),
      signal,
    );
    let obtained: Obtained;
    try {
      obtained = await result;
    } catch (error) {
      const stale = this.#store.staleOnError(found);
      if (stale === undefined || found.state !== 'expired') {
        throw error;
      }
      const fwdStatus =
        error === signal.reason ? 504 : ((error as { status?: number }).status ?? 500);
      const ttl = ttlSeconds(stale, found.ageMs);
      return {
        answer: stale.answer,
        status: { local: { fwd, fwdStatus, ttl } },
        ageMs: ageSent(stale, found.ageMs),
      };
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
      answer: obtained.answer,
      status: { shared: obtained.shared, local },
      ageMs: obtained.ageMs,
    };
  }

  /** The page for a miss in this process: from the shared tier when there is one, else produced here. */
  #obtain(key: string, signal: AbortSignal | undefined, asker: unknown): Promise<Obtained> {
    return this.#shared === undefined
      ? this.#produceHere(key, signal, asker, undefined)
      : this.#throughSharedTier(key, signal, asker);
  }

  /**
   * The shared tier's page when it holds a usable one; else one process of all that share it
   * produces the page under the tier's lock while the others wait for it (bounded by `signal`, or
   * for a refresh by patienceMs), producing it themselves only if it never comes. A refresh
   * (`signal` undefined) wants a page newer than the stale one it replaces.
   */
  async #throughSharedTier(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
  ): Promise<Obtained> {
    const shared = this.#shared!;
    const patience = signal ?? AbortSignal.timeout(this.#patienceMs);
    let wasStored = false;
    for (let waited = false; ; waited = true) {
      const looked = await this.#lookShared(key, signal === undefined, waited);
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
        return this.#produceUnderLock(key, signal, asker, lock.lease, { wasStored, waited });
      }
      // Another process produces it: wait for its announcement, then look again.
      await shared.renderedElsewhere(key, LOOK_AGAIN_MS, patience);
      if (patience.aborted) {
        if (signal !== undefined) {
          throw signal.reason;
        }
        // A refresh whose producer never delivered: produce it here after all.
        return this.#produceHere(key, signal, asker, { entry: { fwd: 'stale' }, store: true });
      }
    }
  }

  /** Produces the page holding the shared tier's lock for it, and stores it there for everyone. */
  async #produceUnderLock(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    lease: Lease,
    { wasStored, waited }: { wasStored: boolean; waited: boolean },
  ): Promise<Obtained> {
    try {
      // Looks again under the lock: the last holder may have stored the page and let go between
      // our lookup and our lock: pages were rendered twice without it (bench/README.md#the-figures-behind-the-codes-comments).
      const looked = await this.#lookShared(key, signal === undefined, waited);
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

  /** The shared tier's page for `key` if it may answer (a refresh takes only a fresh one). */
  async #lookShared(key: string, refreshing: boolean, collapsed: boolean): Promise<SharedLook> {
    const shared = this.#shared!;
    const lookup = await shared.get(key);
    if ('skipped' in lookup) {
      return lookup;
    }
    const page = lookup.found;
    if (page === undefined) {
      return { wasStored: false };
    }
    const found = freshness(page, Date.now());
    const { state } = found;
    if (state === 'miss' || state === 'expired' || (state === 'stale' && refreshing)) {
      return { wasStored: true };
    }
    const { ageMs } = found;
    shared.countHit(state === 'stale');
    const entry: CacheEntry = { hit: true, ttl: ttlSeconds(page, ageMs) };
    if (collapsed) {
      entry.collapsed = true;
    }
    const storedHere = this.#store.adopt(key, page);
    return {
      obtained: {
        answer: page.answer,
        failed: false,
        shared: entry,
        storedHere,
        ageMs: ageSent(page, ageMs),
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
  ): Promise<Obtained> {
    return this.#produceHere(key, signal, asker, {
      entry: { fwd: 'bypass', detail: skipped },
      store: false,
    });
  }

  /**
   * Produces the page here, stores it in this process and, when `sharing` says so, in the shared
   * tier. A page kept is compressed once, in every stored coding (http/encodings.ts), and only once
   * kept: a page the cache turns away (admission) is never compressed for storing, it goes out
   * compressed on its way (bench/README.md#the-figures-behind-the-codes-comments). This request
   * and the shared tier get the page with its codings.
   */
  async #produceHere(
    key: string,
    signal: AbortSignal | undefined,
    asker: unknown,
    sharing: Sharing | undefined,
  ): Promise<Obtained> {
    const produced = await this.#produce(key, signal, asker);
    const kept = this.#keep(key, produced);
    const storedHere = kept !== undefined && this.#store.peek(key) === kept;
    const toShare = sharing !== undefined && sharing.store && kept !== undefined;
    const answer = storedHere || toShare ? await this.#encode(key, kept) : produced.answer;
    const shared = toShare
      ? await this.#share(key, { ...kept, answer }, sharing.entry)
      : sharing?.entry;
    return { answer, failed: produced.failed, shared, storedHere };
  }

  /** The page's stored codings, given to this process's copy as soon as they are made. */
  async #encode(key: string, page: CachedPage): Promise<Answer> {
    try {
      const answer = await encodedForStore(page.answer);
      this.#store.recode(key, page, answer);
      return answer;
    } catch (error) {
      // The page stays as it was: compressed as it goes out.
      this.#log.debug({ err: error, key }, 'render cache: compressing a page failed');
      return page.answer;
    }
  }

  /** Stores a page in the shared tier; its Cache-Status entry says how that went. */
  async #share(key: string, page: CachedPage, entry: CacheEntry): Promise<CacheEntry> {
    const outcome = await this.#shared!.put(key, page);
    if (outcome === 'stored') {
      return { ...entry, stored: true };
    }
    return { ...entry, detail: outcome === 'too-large' ? 'too-large' : `not-stored-${outcome}` };
  }

  /**
   * Stores a page its answer lets shared caches keep (`kept`: the entry for the caches, which this
   * process's may have deferred: the shared tier bounds its own memory), never after a hard
   * revalidation. A page no longer shareable is not served again; a failed one changes nothing.
   */
  #keep(key: string, produced: Produced): CachedPage | undefined {
    if (produced.failed) {
      return undefined;
    }
    if (produced.policy === undefined) {
      // The page may no longer be shared (a refresh said private, say): stop serving the old one.
      this.#store.delete(key);
      return undefined;
    }
    const page: CachedPage = {
      answer: produced.answer,
      groups: produced.groups,
      policy: produced.policy,
      storedAt: 0,
      refreshFailed: false,
    };
    return this.#store.store(key, page) === 'revalidated' ? undefined : page;
  }

  /** Serves a stale page now; one background production brings the entry up to date. */
  #refreshInBackground(key: string): void {
    this.#store.refreshInBackground(
      key,
      () => this.#obtain(key, undefined, undefined),
      (error) => {
        this.#warnRefreshFailed();
        this.#log.debug({ err: error, key }, 'render cache: refresh failed');
      },
      // A failed refresh: stale-if-error keeps serving the last good page.
      ({ failed }) =>
        failed ? new Error('the page reported an error while rendering') : undefined,
    );
  }
}

/** The headers a served page adds to its answer: its Age, when stored, and Cache-Status. */
export function servedHeaders({ status, ageMs }: Served): string[] {
  const headers = ageMs === undefined ? [] : ['Age', String(Math.floor(ageMs / 1000))];
  headers.push(...cacheStatusHeader(status));
  return headers;
}

/** A page of this process's store, as served: a hit, revalidated (RFC 9211's detail) if so. */
function fromStore(page: CachedPage, ageMs: number): Served {
  const local: CacheEntry = { hit: true, ttl: ttlSeconds(page, ageMs) };
  if (page.revalidated) {
    // Why a page still within its max-age is stale: it was revalidated.
    local.detail = 'revalidated';
  }
  return { answer: page.answer, status: { local }, ageMs: ageSent(page, ageMs) };
}

/**
 * The age a stored page is sent with: its own, or for a page revalidated on demand (stale before
 * its time) at least its freshness lifetime, so that a cache behind it computes it stale too (RFC
 * 9111 §4.2.3) instead of keeping the old page as fresh for the rest of its s-maxage.
 */
function ageSent(page: CachedPage, ageMs: number): number {
  return page.revalidated ? Math.max(ageMs, page.policy.freshMs) : ageMs;
}

/** Seconds of freshness left, negative once stale (RFC 9211 §2.5): what s-maxage less the Age sent gives. */
function ttlSeconds(page: CachedPage, ageMs: number): number {
  const ttl = (page.policy.freshMs - Math.floor(ageMs / 1000) * 1000) / 1000;
  // A revalidated page has no freshness left, whatever its age.
  return page.revalidated ? Math.min(ttl, 0) : ttl;
}
