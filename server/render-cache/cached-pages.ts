import type { IncomingHttpHeaders } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { throttledWarning } from '../logger.ts';
import { pageOf, type CacheGroupOptions, type Page } from '../pages/page.ts';
import { CLIENT_GONE, requestSignal, TIMED_OUT, untilAborted } from '../pages/render-signal.ts';
import type { Renderer } from '../pages/renderer.ts';
import type { RouteInfo } from '../pages/route-matcher.ts';
import type { GroupAlias } from './cache-groups.ts';
import { cacheKey, storablePolicy, type SharedCachePolicy } from './policy.ts';
import { sendCachedPage } from './send-cached-page.ts';
import type { Lease, SharedTier } from './shared-tier.ts';
import { type CachedPage, freshness, type RenderCache } from './store.ts';

export interface CachedPagesOptions {
  cache: RenderCache;
  renderer: Renderer;
  lookupRoute: (path: string) => RouteInfo;
  renderTimeoutMs: number;
  /** Pages are stored with nonce placeholders, filled per response (sendCachedPage). */
  csp: ContentSecurityPolicy | undefined;
  /** The tier every process shares (Redis), asked on a miss here; undefined: this process alone. */
  shared?: SharedTier;
  /** CDN spellings of a page's Cache-Groups (CACHE_GROUP_ALIASES). */
  cacheGroupAliases: readonly GroupAlias[];
  log: Logger;
}

/** What answering a cacheable request came to: `gave-up` when nothing could answer in time. */
export type CachedAnswer = 'answered' | 'gave-up';

/** A fresh cached page and what sendCachedPage needs to answer with it. */
export interface FreshAnswer {
  page: CachedPage;
  cacheStatus: string;
  ageMs: number;
}

/** A render as a page to send and, if its final headers allow, the policy to store it under. */
type Candidate = Page & { policy: SharedCachePolicy | undefined; reportedError?: boolean };

/**
 * The page for a miss here, and where it came from: `shared` is the shared tier's Cache-Status
 * entry (undefined without one), `ageMs` the age of a page another process rendered, `stale` that
 * it is to be refreshed.
 */
interface Obtained {
  page: Candidate;
  shared: string | undefined;
  storedHere: boolean;
  ageMs?: number;
  stale?: boolean;
}

/** How often a process waiting for another's render looks again, should the announcement be lost. */
const LOOK_AGAIN_MS = 250;

/**
 * Serves the pages of routes that declare a shared-cache policy: fresh from memory, stale while one
 * background render refreshes it (stale-while-revalidate), stale in place of a render that failed
 * (stale-if-error), and otherwise rendered once per key however many requests ask at once.
 */
export class CachedPages {
  readonly #cache: RenderCache;
  readonly #renderer: Renderer;
  readonly #lookupRoute: (path: string) => RouteInfo;
  readonly #renderTimeoutMs: number;
  readonly #log: Logger;
  readonly #csp: ContentSecurityPolicy | undefined;
  readonly #warnRefreshFailed: () => void;
  readonly #shared: SharedTier | undefined;
  readonly #groupOptions: CacheGroupOptions;

  constructor(options: CachedPagesOptions) {
    const { cache, renderer, lookupRoute, renderTimeoutMs, csp, log } = options;
    this.#shared = options.shared;
    this.#groupOptions = { cacheGroupAliases: options.cacheGroupAliases, log };
    this.#csp = csp;
    this.#cache = cache;
    this.#renderer = renderer;
    this.#lookupRoute = lookupRoute;
    this.#renderTimeoutMs = renderTimeoutMs;
    this.#log = log;
    this.#warnRefreshFailed = throttledWarning(
      log,
      'render cache: a refresh failed, the stale page is served meanwhile',
    );
  }

  /**
   * For the fast path: the answer to a plain request (no query, nothing to decode) whose page is
   * fresh in the cache, or undefined to leave the request to Koa.
   */
  freshAnswer(origin: string, path: string, headers: IncomingHttpHeaders): FreshAnswer | undefined {
    const rules = this.#lookupRoute(path).cacheRules;
    if (rules === undefined) {
      return undefined;
    }
    const decision = cacheKey(rules, origin, path, '', headers);
    if (!('key' in decision) || this.#cache.peekFresh(decision.key)?.status !== 200) {
      return undefined;
    }
    const found = this.#cache.lookup(decision.key);
    if (found.state !== 'fresh') {
      return undefined;
    }
    return {
      page: found.page,
      cacheStatus: `hit; ttl=${ttlSeconds(found.page, found.ageMs)}`,
      ageMs: found.ageMs,
    };
  }

  /** A request that may share its page: fresh or stale from memory, else one render per key. */
  async answer(ctx: Context, key: string, route: RouteInfo): Promise<CachedAnswer> {
    const found = this.#cache.lookup(key);
    if (found.state === 'fresh' || found.state === 'stale') {
      if (found.state === 'stale') {
        this.#refreshInBackground(key, route);
      }
      // RFC 9211's detail names why a page still in its max-age is stale: it was revalidated.
      const detail = found.page.revalidated ? '; detail=revalidated' : '';
      send(
        ctx,
        found.page,
        `hit; ttl=${ttlSeconds(found.page, found.ageMs)}${detail}`,
        found.ageMs,
      );
      return 'answered';
    }
    const { signal, settle } = requestSignal(ctx, this.#renderTimeoutMs);
    const { result, collapsed } = this.#cache.render(
      key,
      (shared) => this.#obtain(key, route, shared),
      signal,
    );
    const forwarded = found.state === 'miss' ? 'fwd=uri-miss' : 'fwd=stale';
    let obtained: Obtained;
    try {
      obtained = await untilAborted(result, signal);
    } catch (error) {
      if (error === signal.reason && error === CLIENT_GONE) {
        // Nobody to answer: Koa writes nothing to a closed response.
        return 'answered';
      }
      const stale = this.#cache.staleOnError(found);
      if (stale !== undefined && found.state === 'expired') {
        const status = error === TIMED_OUT ? 504 : ((error as { status?: number }).status ?? 500);
        send(
          ctx,
          stale,
          `${forwarded}; fwd-status=${status}; ttl=${ttlSeconds(stale, found.ageMs)}`,
          found.ageMs,
        );
        return 'answered';
      }
      if (error === signal.reason) {
        return 'gave-up';
      }
      throw error;
    } finally {
      settle();
    }
    if (obtained.stale && !collapsed) {
      this.#refreshInBackground(key, route);
    }
    const stored = obtained.storedHere && !collapsed;
    send(
      ctx,
      obtained.page,
      `${forwarded}${stored ? '; stored' : ''}${collapsed ? '; collapsed' : ''}`,
      obtained.ageMs,
      obtained.shared,
    );
    return 'answered';
  }

  /**
   * The page for a miss in this process: from the shared tier when it holds a usable one, else
   * rendered here — by one process of all that share the tier: the others wait for its page
   * (bounded by `signal`, or the render timeout for a refresh) and render themselves only if it
   * never comes. A refresh (`signal` undefined) wants a page newer than the stale one it replaces.
   */
  async #obtain(key: string, route: RouteInfo, signal?: AbortSignal): Promise<Obtained> {
    const shared = this.#shared;
    if (shared === undefined) {
      const { page, kept } = await this.#renderAndStore(key, route, signal);
      return { page, shared: undefined, storedHere: this.#storedHere(key, kept) };
    }
    const refreshing = signal === undefined;
    const patience = signal ?? AbortSignal.timeout(this.#renderTimeoutMs);
    let waited = false;
    let wasStored = false;
    let lease: Lease | undefined;
    try {
      for (;;) {
        const lookup = await shared.get(key);
        if ('skipped' in lookup) {
          return await this.#renderHere(key, route, signal, `fwd=bypass; detail=${lookup.skipped}`);
        }
        if (lookup.found !== undefined) {
          wasStored = true;
          const state = freshness(lookup.found, Date.now());
          if (state.state === 'fresh' || (state.state === 'stale' && !refreshing)) {
            shared.countHit(state.state === 'stale');
            return {
              page: lookup.found,
              shared: `hit; ttl=${ttlSeconds(lookup.found, state.ageMs)}${waited ? '; collapsed' : ''}`,
              storedHere: this.#cache.adopt(key, lookup.found),
              ageMs: state.ageMs,
              stale: state.state === 'stale',
            };
          }
        }
        if (lease !== undefined) {
          return await this.#renderHere(
            key,
            route,
            signal,
            wasStored ? 'fwd=stale' : 'fwd=uri-miss',
          );
        }
        const lock = await shared.lock(key);
        if ('skipped' in lock) {
          return await this.#renderHere(key, route, signal, `fwd=bypass; detail=${lock.skipped}`);
        }
        if ('lease' in lock) {
          // Looks again under the lock: the last holder may have stored the page and let go
          // between our lookup and our lock (measured: 1 page in 40 rendered twice without this).
          lease = lock.lease;
          continue;
        }
        // Another process renders it: wait for its announcement, then look again.
        waited = true;
        await shared.renderedElsewhere(key, LOOK_AGAIN_MS, patience);
        if (patience.aborted) {
          if (signal !== undefined) {
            throw signal.reason;
          }
          // A refresh whose renderer never delivered: render it here after all.
          return await this.#renderHere(key, route, signal, 'fwd=stale');
        }
      }
    } finally {
      await lease?.release();
    }
  }

  /** Renders here, stores in this process and, when the answer allows, in the shared tier. */
  async #renderHere(
    key: string,
    route: RouteInfo,
    signal: AbortSignal | undefined,
    sharedStatus: string,
  ): Promise<Obtained> {
    const { page, kept } = await this.#renderAndStore(key, route, signal);
    let shared = sharedStatus;
    if (kept !== undefined && !sharedStatus.startsWith('fwd=bypass')) {
      const outcome = await this.#shared!.put(key, kept);
      shared +=
        outcome === 'stored'
          ? '; stored'
          : outcome === 'too-large'
            ? '; detail=too-large'
            : `; detail=not-stored-${outcome}`;
    }
    return { page, shared, storedHere: this.#storedHere(key, kept) };
  }

  /** Whether this process's cache holds `kept` (it may go to the shared tier only: see #keep). */
  #storedHere(key: string, kept: CachedPage | undefined): boolean {
    return kept !== undefined && this.#cache.peek(key) === kept;
  }

  /**
   * Renders the page of a cache key (its URL) and stores it if the answer allows (`kept`: the entry
   * for the caches, which this process's may have deferred). `signal` aborts it only while it waits
   * for a slot, once every request waiting for it has gone; without one it is a background refresh.
   */
  async #renderAndStore(
    key: string,
    route: RouteInfo,
    signal: AbortSignal | undefined,
  ): Promise<{ page: Candidate; kept: CachedPage | undefined }> {
    const rendered = signal
      ? await this.#renderer.render(key, route, signal)
      : await this.#renderer.renderInBackground(key, route);
    const candidate = this.#candidate(rendered, route);
    if (rendered.reportedError) {
      // A component threw (Angular answered anyway, maybe with a broken page): a failed render,
      // never stored. The request gets what Angular rendered, as without the cache.
      return { page: { ...candidate, policy: undefined, reportedError: true }, kept: undefined };
    }
    return { page: candidate, kept: this.#keep(key, candidate) };
  }

  /** Serves a stale page now; one background render brings the entry up to date. */
  #refreshInBackground(key: string, route: RouteInfo): void {
    const refresh = () => this.#obtain(key, route, undefined);
    this.#cache.refreshInBackground(
      key,
      refresh,
      (error) => {
        this.#warnRefreshFailed();
        this.#log.debug({ err: error, key }, 'render cache: refresh failed');
      },
      // A failed refresh: stale-if-error keeps serving the last good page.
      ({ page }) =>
        page.reportedError ? new Error('the app reported an error while rendering') : undefined,
    );
  }

  #candidate(rendered: Parameters<typeof pageOf>[0], route: RouteInfo): Candidate {
    const { page, final } = pageOf(rendered, this.#csp, this.#groupOptions);
    return { ...page, policy: storablePolicy(page.status, route.status, final) };
  }

  /**
   * Stores a render the app lets shared caches keep; one it no longer does is not served again.
   * The entry is returned for the shared tier even when this process's cache deferred it (Redis
   * bounds its own memory), but never after a hard revalidation.
   */
  #keep(key: string, candidate: Candidate): CachedPage | undefined {
    if (!candidate.policy) {
      // The app no longer lets this page be shared (a refresh said private, say): stop serving it.
      this.#cache.delete(key);
      return undefined;
    }
    const page: CachedPage = {
      ...candidate,
      policy: candidate.policy,
      storedAt: 0,
      refreshFailed: false,
    };
    // A hard revalidation during its render: kept nowhere, not even in the shared tier.
    return this.#cache.store(key, page) === 'revalidated' ? undefined : page;
  }
}

/** Koa's pages step answers through the same function as the fast path. */
function send(
  ctx: Context,
  page: Page,
  cacheStatus: string,
  ageMs: number | undefined,
  sharedStatus?: string,
): void {
  ctx.respond = false;
  ctx.status = sendCachedPage(ctx.req, ctx.res, page, cacheStatus, ageMs, sharedStatus);
}

/** Seconds of freshness left, negative once stale (RFC 9211 §2.5): what s-maxage less the Age sent gives. */
function ttlSeconds(page: CachedPage, ageMs: number): number {
  const ttl = (page.policy.freshMs - Math.floor(ageMs / 1000) * 1000) / 1000;
  // A revalidated page has no freshness left, whatever its age.
  return page.revalidated ? Math.min(ttl, 0) : ttl;
}
