import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { RenderMode } from '@angular/ssr';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import type * as AppServerBundle from './main.server.mjs';
import type { CriticalCssMode } from './config';
import { createCriticalCss } from './critical-css';
import { cacheKey, HARMLESS_COOKIES_HEADER, storablePolicy } from './cache-policy';
import { strongEtag } from './entity-tag';
import type { CachedPage, RenderCache } from './render-cache';
import type { RenderLimiter } from './render-limiter';
import { collectConsole } from './request-console';
import { createRouteLookup, type RouteInfo } from './render-modes';
import { requestOrigin } from './request-guard';
import { throttledWarning } from './throttled-log';

export interface CommonEnginePagesOptions {
  /** The app's server bundle (dist/server/main.server.mjs): bootstrap, engine and tokens. */
  app: typeof AppServerBundle;
  browserDir: string;
  serverDir: string;
  allowedHosts: readonly string[];
  renderTimeoutMs: number;
  criticalCss: CriticalCssMode;
  /** Bounds the renders running and waiting (shared with the health endpoint, which reports it). */
  limiter: RenderLimiter;
  /** Pages of routes that declare a shared-cache policy; undefined when RENDER_CACHE_BYTES is 0. */
  renderCache: RenderCache | undefined;
  log: Logger;
}

const HTML = 'text/html; charset=utf-8';
/** The cache's name in Cache-Status (RFC 9211). */
const CACHE_NAME = 'render-cache';

export interface CommonEnginePages {
  /** Answers a page request: prerendered, rendered, cached or the client-side shell. */
  renderPage: Middleware;
  freshCachedPage: (origin: string, path: string, headers: IncomingHttpHeaders) => FreshPage | undefined;
}

/** A fresh page of the render cache and every header of its answer. */
export interface FreshPage {
  page: CachedPage;
  headers: string[];
}

/** A finished render: the page and what the app set through RESPONSE_INIT. */
interface Rendered {
  html: string;
  status: number;
  headers: HeadersInit | undefined;
  /** Angular's ErrorHandler reported an error: the page may be broken (a component threw). */
  reportedError: boolean;
}

/**
 * Renders pages with CommonEngine in production. Each route's render mode comes from the app's
 * server routes: client-only routes get the client-side shell, the rest are rendered (CommonEngine
 * itself answers prerendered routes from their files). Renders are bounded in number and in time:
 * a render that takes too long is answered with the client-side shell, which the browser renders.
 * Routes whose headers declare a shared-cache policy are rendered once per cache key and served
 * from memory while the policy allows (cache-policy.ts, render-cache.ts).
 */
export function createCommonEnginePages(options: CommonEnginePagesOptions): CommonEnginePages {
  const { app, browserDir, serverDir, log, limiter, renderCache } = options;
  const engine = new app.CommonEngine({ allowedHosts: [...options.allowedHosts] });
  const documentFilePath = join(serverDir, 'index.server.html');
  const lookupRoute = createRouteLookup(app.serverRoutes);
  const warnTimeout = throttledWarning(log, 'render timed out: answered with the client-side shell');
  const warnRefreshFailed = throttledWarning(log, 'render cache: a refresh failed, the stale page is served meanwhile');
  // Compiled at startup (the default): ~2 ms less per render than CommonEngine's Beasties pass.
  const inlineCompiledCss = options.criticalCss === 'compiled' ? createCriticalCss(browserDir) : (html: string) => html;
  // Read once: the build never changes under a running server.
  const clientShell = readFileSync(join(browserDir, 'index.csr.html'));

  /**
   * One render of `url` in a render slot (a background one when `signal` is undefined). A failure
   * carries what the app wrote to the console, for the request's log line.
   */
  const render = async (url: string, route: RouteInfo, signal: AbortSignal | undefined): Promise<Rendered> => {
    // The app may set the status (a 404 page does) through RESPONSE_INIT while it renders.
    const responseInit: ResponseInit = { status: route.status, headers: route.headers };
    // What the app writes to the console while rendering (Angular's ErrorHandler) belongs to this
    // request's log line, not to lines of its own.
    const captured = { lines: [] as string[], errors: 0 };
    const consoleOutput = captured.lines;
    const task = () =>
      collectConsole(captured, () =>
        engine.render({
          bootstrap: app.default,
          documentFilePath,
          publicPath: browserDir,
          url,
          providers: [{ provide: app.RESPONSE_INIT, useValue: responseInit }],
          inlineCriticalCss: options.criticalCss === 'per-request',
        }),
      );
    let html: string;
    try {
      html = await (signal ? limiter.run(task, signal) : limiter.runInBackground(task));
    } catch (error) {
      // A render that failed (500) or was shed (503); a signal's reason is shared, left as is.
      throw error === signal?.reason ? error : Object.assign(error as object, { consoleOutput });
    }
    if (consoleOutput.length > 0) {
      log.warn({ url, console: consoleOutput }, 'the app wrote to the console while rendering');
    }
    return { html: inlineCompiledCss(html), status: responseInit.status ?? 200, headers: responseInit.headers, reportedError: captured.errors > 0 };
  };

  /**
   * Renders the page of a cache key (its URL) and stores it if the answer allows. `signal` aborts
   * it only while it waits for a slot, once every request waiting for it has gone; undefined for a
   * background refresh.
   */
  const renderForCache = async (key: string, route: RouteInfo, signal: AbortSignal | undefined) => {
    const rendered = await render(key, route, signal);
    const page = toPage(rendered, route);
    if (rendered.reportedError) {
      // A component threw (Angular answered anyway, maybe with a broken page): a failed render, never
      // stored. A background refresh fails, so stale-if-error keeps serving the last good page; a
      // request gets what Angular rendered, as without the cache.
      if (!signal) throw new Error('the app reported an error while rendering');
      return { ...page, policy: undefined };
    }
    if (page.policy) {
      renderCache!.store(key, page as CachedPage);
    } else {
      // The app no longer lets this page be shared (a refresh said private, say): stop serving it.
      renderCache!.delete(key);
    }
    return page;
  };

  /** Serves a stale page now; one background render brings the entry up to date. */
  const refresh = (key: string, route: RouteInfo) => {
    if (renderCache!.rendering(key)) {
      return;
    }
    renderCache!.countRefresh();
    renderCache!.share(key, () => renderForCache(key, route, undefined), undefined).result.catch((error: unknown) => {
      renderCache!.refreshFailed(key);
      warnRefreshFailed();
      log.debug({ err: error, key }, 'render cache: refresh failed');
    });
  };

  /**
   * For step 0 (origin.ts): the fresh cached page a plain request (no query, nothing to decode)
   * would be answered with, and the headers to send, or undefined when Koa must answer it.
   */
  const freshCachedPage = (origin: string, path: string, headers: IncomingHttpHeaders): FreshPage | undefined => {
    const rules = renderCache ? lookupRoute(path).cacheRules : undefined;
    if (rules === undefined) {
      return undefined;
    }
    const decision = cacheKey(rules, origin, path, '', headers);
    if (!('key' in decision) || renderCache!.peekFresh(decision.key) === undefined) {
      return undefined;
    }
    const found = renderCache!.lookup(decision.key);
    if (found.state !== 'fresh') {
      return undefined;
    }
    return { page: found.page, headers: pageHeaders(found.page, `hit; ttl=${ttlSeconds(found.page, found.ageMs)}`, found.ageMs) };
  };

  const renderPage: Middleware = async (ctx) => {
    const route = lookupRoute(ctx.path);
    ctx.set('Content-Type', HTML);

    if (route.renderMode === RenderMode.Client) {
      ctx.status = route.status ?? 200;
      ctx.body = clientShell;
      return;
    }

    const origin = requestOrigin(ctx);
    if (renderCache && route.cacheRules) {
      const decision = cacheKey(route.cacheRules, origin, ctx.path, ctx.querystring, ctx.headers);
      if ('key' in decision) {
        return answerCacheable(ctx, decision.key, route);
      }
      ctx.set('Cache-Status', `${CACHE_NAME}; fwd=bypass; detail=${decision.bypass}`);
    }

    // The origin the guard parsed and allowed, then the request target: nothing else of the
    // headers (an extra port, path or query in Host) can change the page rendered.
    const url = `${origin}${ctx.path}${ctx.search}`;
    const { signal, settle } = requestSignal(ctx, options.renderTimeoutMs);
    let rendered: Rendered;
    try {
      rendered = await untilAborted(render(url, route, signal), signal);
    } catch (error) {
      if (error !== signal.reason) {
        throw error;
      }
      if (signal.reason === TIMED_OUT) {
        answerShell(ctx);
      }
      // Otherwise the client left: nothing to answer.
      return;
    } finally {
      settle();
    }
    ctx.status = rendered.status;
    if (rendered.headers) {
      for (const [name, value] of responseHeaders(rendered.headers)) {
        ctx.set(name, value);
      }
    }
    // A Buffer body spares Koa a regex and a byte count over the whole page.
    ctx.body = Buffer.from(rendered.html);
  };

  return { renderPage, freshCachedPage };

  /** A request that may share its page: fresh or stale from memory, else one render per key. */
  async function answerCacheable(ctx: Context, key: string, route: RouteInfo): Promise<void> {
    const cache = renderCache!;
    const found = cache.lookup(key);
    if (found.state === 'fresh' || found.state === 'stale') {
      if (found.state === 'stale') {
        refresh(key, route);
      }
      answerPage(ctx, found.page, `hit; ttl=${ttlSeconds(found.page, found.ageMs)}`, found.ageMs);
      return;
    }
    const { signal, settle } = requestSignal(ctx, options.renderTimeoutMs);
    const { result, collapsed } = cache.share(key, (shared) => renderForCache(key, route, shared), signal);
    const forwarded = found.state === 'miss' ? 'fwd=uri-miss' : 'fwd=stale';
    let page: Page;
    try {
      page = await untilAborted(result, signal);
    } catch (error) {
      if (error === signal.reason && error === CLIENT_GONE) {
        return;
      }
      // RFC 5861 stale-if-error: a failed or timed-out render is answered with the stale page.
      if (found.state === 'expired' && found.usableOnError) {
        const status = error === TIMED_OUT ? 504 : ((error as { status?: number }).status ?? 500);
        cache.servedStaleOnError();
        answerPage(ctx, found.page, `${forwarded}; fwd-status=${status}; ttl=${ttlSeconds(found.page, found.ageMs)}`, found.ageMs);
        return;
      }
      if (error === signal.reason) {
        answerShell(ctx);
        return;
      }
      throw error;
    } finally {
      settle();
    }
    const stored = page.policy !== undefined && !collapsed;
    answerPage(ctx, page, `${forwarded}${stored ? '; stored' : ''}${collapsed ? '; collapsed' : ''}`, undefined);
  }

  function answerShell(ctx: Context): void {
    warnTimeout();
    ctx.status = 200;
    ctx.remove('Cache-Status');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = clientShell;
  }
}

/** A rendered page with every header precomputed; `policy` set when a shared cache may store it. */
type Page = Omit<CachedPage, 'policy'> & { policy: CachedPage['policy'] | undefined };

/** The answer of a render as a page to send and, if storablePolicy allows, to store. */
function toPage(rendered: Rendered, route: RouteInfo): Page {
  const headers = responseHeaders(rendered.headers);
  const body = Buffer.from(rendered.html);
  const etag = strongEtag(body);
  const flat = ['Content-Type', HTML];
  for (const [name, value] of headers) {
    flat.push(name, value);
  }
  flat.push('ETag', etag);
  const policy = storablePolicy(rendered.status, route.status, headers);
  return { status: rendered.status, headers: flat, body, etag, storedAt: 0, policy, refreshFailed: false };
}

/** What the app set through RESPONSE_INIT, less the origin's own route declarations. */
function responseHeaders(init: HeadersInit | undefined): Headers {
  const headers = new Headers(init);
  headers.delete(HARMLESS_COOKIES_HEADER);
  return headers;
}

/**
 * Every header of a page's answer, in one order for Koa and for step 0 (origin.ts), which must
 * send the same bytes: the page's own, then its age and what the cache did (RFC 9211).
 */
export function pageHeaders(page: Page, cacheStatus: string, ageMs: number | undefined): string[] {
  const headers = [...page.headers];
  if (ageMs !== undefined) {
    headers.push('Age', String(Math.floor(ageMs / 1000)));
  }
  headers.push('Cache-Status', `${CACHE_NAME}; ${cacheStatus}`);
  return headers;
}

/** Sends a page as stored. */
function answerPage(ctx: Context, page: Page, cacheStatus: string, ageMs: number | undefined): void {
  ctx.status = page.status;
  // Set by the router and above; the page's own values follow, in the page's order.
  ctx.res.removeHeader('Cache-Control');
  ctx.res.removeHeader('Content-Type');
  const headers = pageHeaders(page, cacheStatus, ageMs);
  for (let i = 0; i < headers.length; i += 2) {
    ctx.res.setHeader(headers[i], headers[i + 1]);
  }
  ctx.body = page.body;
}

/** Seconds of freshness left, negative once stale (RFC 9211 §2.5): what s-maxage less the Age sent gives. */
function ttlSeconds(page: CachedPage, ageMs: number): number {
  return (page.policy.freshMs - Math.floor(ageMs / 1000) * 1000) / 1000;
}

/**
 * One controller per request, aborted by the deadline or by the client leaving; its timer is
 * cleared (settle) as soon as the render settles (AbortSignal.timeout would keep one per render
 * alive for the whole timeout, and AbortSignal.any adds weak-ref bookkeeping per render).
 */
function requestSignal(ctx: Context, timeoutMs: number): { signal: AbortSignal; settle: () => void } {
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) {
      controller.abort(CLIENT_GONE);
    }
  });
  return { signal: controller.signal, settle: () => clearTimeout(deadline) };
}

/** Why a render was given up; compared by identity. */
const TIMED_OUT = new Error('render timed out');
const CLIENT_GONE = new Error('client closed the connection');

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. A render that
 * is abandoned this way still runs to its end (Angular cannot cancel one) and holds its limiter
 * slot until then; its late failure is expected and must not become an unhandled rejection.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
