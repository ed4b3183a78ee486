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
import type { CachedPage, RenderCache } from './store.ts';

export interface CachedPagesOptions {
  cache: RenderCache;
  renderer: Renderer;
  lookupRoute: (path: string) => RouteInfo;
  renderTimeoutMs: number;
  /** Pages are stored with nonce placeholders, filled per response (sendCachedPage). */
  csp: ContentSecurityPolicy | undefined;
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
type Candidate = Page & { policy: SharedCachePolicy | undefined };

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
  readonly #groupOptions: CacheGroupOptions;

  constructor(options: CachedPagesOptions) {
    const { cache, renderer, lookupRoute, renderTimeoutMs, csp, log } = options;
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
      (shared) => this.#renderAndStore(key, route, shared),
      signal,
    );
    const forwarded = found.state === 'miss' ? 'fwd=uri-miss' : 'fwd=stale';
    let page: Candidate;
    try {
      page = await untilAborted(result, signal);
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
    const stored = page.policy !== undefined && !collapsed;
    send(
      ctx,
      page,
      `${forwarded}${stored ? '; stored' : ''}${collapsed ? '; collapsed' : ''}`,
      undefined,
    );
    return 'answered';
  }

  /**
   * Renders the page of a cache key (its URL) and stores it if the answer allows. `signal` aborts
   * it only while it waits for a slot, once every request waiting for it has gone.
   */
  async #renderAndStore(key: string, route: RouteInfo, signal: AbortSignal): Promise<Candidate> {
    const rendered = await this.#renderer.render(key, route, signal);
    const candidate = this.#candidate(rendered, route);
    if (rendered.reportedError) {
      // A component threw (Angular answered anyway, maybe with a broken page): a failed render,
      // never stored. The request gets what Angular rendered, as without the cache.
      return { ...candidate, policy: undefined };
    }
    this.#keep(key, candidate);
    return candidate;
  }

  /** Serves a stale page now; one background render brings the entry up to date. */
  #refreshInBackground(key: string, route: RouteInfo): void {
    const refresh = async () => {
      const rendered = await this.#renderer.renderInBackground(key, route);
      if (rendered.reportedError) {
        // A failed refresh: stale-if-error keeps serving the last good page.
        throw new Error('the app reported an error while rendering');
      }
      this.#keep(key, this.#candidate(rendered, route));
    };
    this.#cache.refreshInBackground(key, refresh, (error) => {
      this.#warnRefreshFailed();
      this.#log.debug({ err: error, key }, 'render cache: refresh failed');
    });
  }

  #candidate(rendered: Parameters<typeof pageOf>[0], route: RouteInfo): Candidate {
    const { page, final } = pageOf(rendered, this.#csp, this.#groupOptions);
    return { ...page, policy: storablePolicy(page.status, route.status, final) };
  }

  /** Stores a render the app lets shared caches keep; one it no longer does is not served again. */
  #keep(key: string, candidate: Candidate): void {
    if (candidate.policy) {
      this.#cache.store(key, {
        ...candidate,
        policy: candidate.policy,
        storedAt: 0,
        refreshFailed: false,
      });
    } else {
      // The app no longer lets this page be shared (a refresh said private, say): stop serving it.
      this.#cache.delete(key);
    }
  }
}

/** Koa's pages step answers through the same function as the fast path. */
function send(ctx: Context, page: Page, cacheStatus: string, ageMs: number | undefined): void {
  ctx.respond = false;
  ctx.status = sendCachedPage(ctx.req, ctx.res, page, cacheStatus, ageMs);
}

/** Seconds of freshness left, negative once stale (RFC 9211 §2.5): what s-maxage less the Age sent gives. */
function ttlSeconds(page: CachedPage, ageMs: number): number {
  const ttl = (page.policy.freshMs - Math.floor(ageMs / 1000) * 1000) / 1000;
  // A revalidated page has no freshness left, whatever its age.
  return page.revalidated ? Math.min(ttl, 0) : ttl;
}
