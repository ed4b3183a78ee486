import { RenderMode } from '@angular/ssr';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import {
  noncedAnswer,
  withFreshNonce,
  type NoncedAnswer,
  type NonceSlots,
} from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { REVALIDATE } from '../files/static-index.ts';
import { throttledWarning } from '../logger.ts';
import type { CachedPages } from '../render-cache/cached-pages.ts';
import { cacheKey } from '../render-cache/policy.ts';
import { CACHE_NAME } from '../render-cache/send-cached-page.ts';
import { GROUP_HEADERS, type GroupAlias } from '../render-cache/cache-groups.ts';
import { HTML, pageOf } from './page.ts';
import { requestSignal, TIMED_OUT, untilAborted } from './render-signal.ts';
import type { Rendered, Renderer } from './renderer.ts';
import type { RouteInfo } from './route-matcher.ts';

export interface PagesOptions {
  renderer: Renderer;
  lookupRoute: (path: string) => RouteInfo;
  /** The build's client-side shell: client-only routes, and renders that ran out of time. */
  clientShell: Buffer;
  renderTimeoutMs: number;
  /** Pages of routes that declare a shared-cache policy; undefined when RENDER_CACHE_BYTES is 0. */
  cachedPages: CachedPages | undefined;
  /** A fresh nonce on every HTML answer; undefined when CSP is off. */
  csp: ContentSecurityPolicy | undefined;
  /** CDN spellings of a page's Cache-Groups (CACHE_GROUP_ALIASES). */
  cacheGroupAliases: readonly GroupAlias[];
  log: Logger;
}

/**
 * Answers a page request. Each route's render mode comes from the app's server routes: client-only
 * routes get the client-side shell, the rest are rendered (CommonEngine itself answers prerendered
 * routes from their files). Renders are bounded in number and in time: a render that takes too
 * long is answered with the client-side shell, which the browser renders. Routes whose headers
 * declare a shared-cache policy are answered by the render cache (render-cache/).
 */
export function pages(options: PagesOptions): Middleware {
  const { renderer, lookupRoute, cachedPages, csp } = options;
  const warnTimeout = throttledWarning(
    options.log,
    'render timed out: answered with the client-side shell',
  );
  // The shell is answered with one of two Cache-Controls; under a policy, each its nonced answer.
  const shellWith = (cacheControl: string): Shell => ({
    cacheControl,
    nonced: csp && noncedAnswer(options.clientShell.toString(), csp, cacheControl),
  });
  const clientOnlyShell = shellWith(REVALIDATE);
  const timedOutShell = shellWith('no-store');

  const answerShell = (ctx: Context, status: number, { cacheControl, nonced }: Shell) => {
    ctx.status = status;
    ctx.set('Content-Type', HTML);
    if (nonced) {
      setHeaders(ctx, nonced.headers);
      answerNonced(ctx, nonced.body, nonced.slots);
      return;
    }
    ctx.set('Cache-Control', cacheControl);
    ctx.body = options.clientShell;
  };
  const answerTimedOut = (ctx: Context) => {
    warnTimeout();
    answerShell(ctx, 200, timedOutShell);
  };

  return async (ctx) => {
    const route = lookupRoute(ctx.path);
    if (route.renderMode === RenderMode.Client) {
      return answerShell(ctx, route.status ?? 200, clientOnlyShell);
    }

    const { origin } = ctx.state;
    let cacheStatus: string | undefined;
    if (cachedPages && route.cacheRules) {
      const decision = cacheKey(route.cacheRules, origin, ctx.path, ctx.querystring, ctx.headers);
      if ('key' in decision) {
        if ((await cachedPages.answer(ctx, decision.key, route)) === 'gave-up') {
          answerTimedOut(ctx);
        }
        return;
      }
      cacheStatus = `${CACHE_NAME}; fwd=bypass; detail=${decision.bypass}`;
    }

    // The origin the guard parsed and allowed, then the request target: nothing else of the
    // headers (an extra port, path or query in Host) can change the page rendered.
    const url = `${origin}${ctx.path}${ctx.search}`;
    const { signal, settle } = requestSignal(ctx, options.renderTimeoutMs);
    let rendered: Rendered;
    try {
      rendered = await untilAborted(renderer.render(url, route, signal), signal);
    } catch (error) {
      if (error !== signal.reason) {
        throw error;
      }
      if (signal.reason === TIMED_OUT) {
        answerTimedOut(ctx);
      }
      // Otherwise the client left: nothing to answer.
      return;
    } finally {
      settle();
    }
    const { page } = pageOf(rendered, csp, options);
    ctx.status = page.status;
    for (let i = 0; i < page.headers.length; i += 2) {
      ctx.append(page.headers[i], page.headers[i + 1]);
    }
    if (ctx.fresh) {
      // A 304 is coming (koa-conditional-get, or answerNonced): groups are for the full answer only.
      GROUP_HEADERS.forEach((name) => ctx.remove(name));
    }
    if (cacheStatus !== undefined) {
      ctx.set('Cache-Status', cacheStatus);
    }
    if (page.nonceSlots) {
      answerNonced(ctx, page.body, page.nonceSlots);
      return;
    }
    ctx.body = page.body;
  };
}

/** The client-side shell as answered with one Cache-Control: as is, or (under a policy) nonced. */
interface Shell {
  cacheControl: string;
  nonced: NoncedAnswer | undefined;
}

/** Sets a flat (name, value, …) header list on Koa's response. */
function setHeaders(ctx: Context, headers: string[]): void {
  for (let i = 0; i < headers.length; i += 2) {
    ctx.set(headers[i], headers[i + 1]);
  }
}

/**
 * An HTML answer with a fresh nonce, its headers set. A request whose copy is current gets its 304
 * here, without a policy: koa-conditional-get would send it with the policy of a nonce the
 * browser's copy does not hold, and a 304's headers replace the stored ones (RFC 9111 §4.3.4).
 */
function answerNonced(ctx: Context, template: Buffer, slots: NonceSlots): void {
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  const { body, headers } = withFreshNonce(template, slots);
  setHeaders(ctx, headers);
  ctx.body = body;
}
