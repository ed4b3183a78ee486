import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import etag from '@koa/etag';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import conditional from 'koa-conditional-get';
import type { Logger } from 'pino';
import { type ApiOrigin, type AppApi, appApiStep } from './app-api/api-step.ts';
import { partStep } from './pages/personal/part-step.ts';
import type { ContentSecurityPolicy } from './csp/policy.ts';
import { errorHandler } from './error-handler.ts';
import { report } from './errors.ts';
import { fastPath } from './fast-path.ts';
import type { AssetArchive } from './files/asset-archive.ts';
import { filesOfEarlierBuilds } from './files/earlier-builds.ts';
import { filesFromDisk, filesFromMemory } from './files/serve-files.ts';
import { canAnswer } from './http/connection.ts';
import type { StaticIndex } from './files/static-index.ts';
import { earlyHints, type EarlyHintsMode } from './hints/early-hints.ts';
import type { PageHints } from './hints/page-hints.ts';
import { throttledWarning } from './logger.ts';
import type { RouteMessage } from './channels.ts';
import { koaAnswers } from './http/koa-answer.ts';
import { observedRequests } from './observe/requests.ts';
import type { Pages } from './pages/pages.ts';
import { HEALTH_PATHS, healthEndpoints, type Readiness } from './process/health.ts';
import { REVALIDATE_PATH } from './revalidation/endpoint.ts';
import { canonicalPath, canonicalTarget } from './request/page-target.ts';
import { requestGuard } from './request/request-guard.ts';
import { type HostRules, RequestOrigins } from './request/request-origin.ts';
import { FILE_LIKE } from './request/url-path.ts';

export interface OriginOptions {
  /** Which hosts the origin answers for, and whether a proxy's X-Forwarded-* is trusted. */
  hosts: HostRules;
  /** The browser build and its index; undefined under `ng serve`, whose dev server serves files. */
  files: { browserDir: string; index: StaticIndex } | undefined;
  /** Recent builds' hashed files (ASSET_ARCHIVE); undefined: none but this build's. */
  archive?: AssetArchive;
  /** The pages step: prerendered, rendered, cached or the client-side shell. */
  pages: Pages;
  /**
   * Paths that keep a trailing slash in their one spelling (request/page-target.ts): a localized
   * build's locale roots (`/fr`, whose base href `/fr/` names it too); none in a plain build.
   */
  pageRoots?: ReadonlySet<string>;
  /** Sent before a page is looked up or rendered (103 Early Hints); undefined when EARLY_HINTS is off. */
  hints?: { hints: PageHints; mode: Exclude<EarlyHintsMode, 'off'> };
  /** The Content-Security-Policy of HTML answers, for the error pages too; undefined when off. */
  csp?: ContentSecurityPolicy;
  readiness: Readiness;
  /** POST /_origin/revalidate (revalidation/endpoint.ts); undefined when REVALIDATE_TOKEN is unset. */
  revalidateEndpoint?: Middleware;
  /** The app's own API on `/api/…` (its bundle's `api` export); undefined when it has none. */
  api?: AppApi;
  /** What the origin offers the API besides the request (its revalidation). */
  apiOrigin?: ApiOrigin;
  /** The build's id, for an app with personal parts: their part step answers its own build's. */
  build?: string;
  /** What /healthz reports besides the origin's own counters. */
  stats: () => object;
  log: Logger;
  /** Answer what Koa would answer from memory before Koa (fast-path.ts). */
  fastPath: boolean;
}

const NO_ROOTS: ReadonlySet<string> = new Set();

/** Errors a response meets when its client went away (or reset its HTTP/2 stream) or speaks broken HTTP: routine. */
const CLIENT_GONE = new Set([
  'ERR_STREAM_PREMATURE_CLOSE',
  'EPIPE',
  'ECONNRESET',
  'ECONNABORTED',
  'ERR_HTTP2_INVALID_STREAM',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_STREAM_CANCEL',
]);

/**
 * The origin's request path: Koa's chain, whose steps are a request's story top to bottom, with the
 * fast path in front when it applies. Returns the server's request listener.
 */
export function createOrigin(options: OriginOptions): RequestListener {
  const origins = new RequestOrigins(options.hosts);
  const counters = { answeredBeforeKoa: 0 };
  const nameOf = namedByPath(options.pages, options.pageRoots ?? NO_ROOTS);
  const koa = koaChain(options, origins, () => counters).callback();
  // Koa answers its own failures (errorHandler, then its onerror): nothing is left to catch here.
  const handle: RequestListener = (req, res) => void koa(req, res);
  const { files } = options;
  if (!files || !options.fastPath) {
    return observedRequests(handle, nameOf);
  }
  const fromMemory = fastPath(files.index, options.readiness, origins, options.pages, {
    api: options.api !== undefined,
    nameOf,
  });
  return observedRequests(handle, nameOf, (req, res) => {
    if (fromMemory(req, res)) {
      counters.answeredBeforeKoa++;
      return true;
    }
    return false;
  });
}

/** What names a file of the build in traces and logs: one name for all of them, never its path. */
export const FILE_ROUTE = '/{file}';

/**
 * Names an observed request no step named, from its path, once it ended: the origin's endpoints by
 * their own path, a file by FILE_ROUTE, anything else by the app's route for it (a prerendered
 * page, a redirect to a path's one spelling (by the page it sends to), a 405). A request refused
 * before any route was looked at (a forged Host, a malformed target) stays unnamed: its path is
 * anybody's (the error handler says so: errors.ts).
 */
function namedByPath(pages: Pages, roots: ReadonlySet<string>) {
  return (req: IncomingMessage, res: ServerResponse): RouteMessage | undefined => {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const asked = query === -1 ? target : target.slice(0, query);
    // A redirect to a page's one spelling is named by the page it sends to.
    const path = res.statusCode === 308 ? (canonicalPath(asked, roots) ?? asked) : asked;
    if (HEALTH_PATHS.has(path) || path === REVALIDATE_PATH) {
      return { res, route: path };
    }
    if (FILE_LIKE.test(path)) {
      return { res, route: FILE_ROUTE };
    }
    const page = pages.routeOf(path);
    return page && { res, route: page.template, mode: page.mode, locale: page.locale };
  };
}

/** Koa's chain: each middleware is one named step. */
function koaChain(options: OriginOptions, origins: RequestOrigins, counters: () => object): Koa {
  const { log, files } = options;
  const app = koaApp(options.hosts.trustProxy, log);

  // koaAnswers: every answer goes out through the origin's one writer (http/answer.ts), also what
  // Koa's own steps below leave on the context (JSON, a file stream, a redirect, a 405).
  app.use(koaAnswers);

  // errorHandler: failures become a clean status and page, never a stack; 5xx are logged once.
  app.use(errorHandler(log, throttledWarning(log, 'ORIGIN_OVERLOADED'), options.csp));

  // healthEndpoints: liveness and readiness for the supervisor and the load balancer.
  app.use(healthEndpoints(options.readiness, () => ({ ...options.stats(), ...counters() })));

  // revalidateEndpoint: on-demand revalidation for a CMS webhook, which calls the service by its
  // internal name: before the Host guard, authenticated by its token instead. Never renders.
  if (options.revalidateEndpoint) {
    app.use(options.revalidateEndpoint);
  }

  // appApi: the app's own API, which renders call by an internal address the Host rules need not
  // list: before the guard, like the revalidation endpoint. Never renders.
  if (options.api) {
    app.use(appApiStep(options.api, log, options.apiOrigin));
  }

  // requestGuard: cheap rejections before any work — forged or malformed hosts, odd request
  // targets, unsafe paths. Leaves ctx.state.origin, the only part of the headers a render sees.
  app.use(requestGuard(origins));

  // partStep: one personal part of a page, for a surrogate assembling the page with ESI; after the
  // guard: the page is the one of the request's host.
  if (options.build !== undefined) {
    app.use(partStep(options.pages, options.build));
  }

  // filesFromMemory: files of the browser build and prerendered pages, with their own validators.
  if (files) {
    app.use(filesFromMemory(files.index));
  }

  // validators: for what Koa itself sends (files from disk), one place turns a matching
  // If-None-Match into 304.
  app.use(conditional());
  app.use(etag());

  // filesFromDisk: files the index did not hold (over its size limits).
  if (files) {
    app.use(filesFromDisk(files.browserDir, files.index));
  }

  // filesOfEarlierBuilds: a hashed file of a recent build, for a page of it during a deploy.
  if (options.archive) {
    app.use(filesOfEarlierBuilds(options.archive));
  }

  // canonicalTarget: a page asked for by another spelling of its path (`//a`, `/a/`, `/%61`, an
  // empty `;`) is sent to its one spelling, before anything is looked up or rendered for it: the
  // route, the cache key and the render then read the same URL, as Angular's router reads it.
  app.use(canonicalTarget(options.pageRoots ?? NO_ROOTS));

  // earlyHints: a page's stylesheet, scripts and route chunks, in a 103 before its page is looked
  // up or rendered, and in the Link of its answer.
  if (options.hints) {
    app.use(earlyHints(options.hints.hints, options.hints.mode));
  }

  // pages: everything else that is not a file is the Angular app's to answer.
  const router = pagesRouter(options.pages);
  app.use(router.routes());
  // Pages answer GET and HEAD only: 405 with Allow for other methods, OPTIONS lists them.
  app.use(router.allowedMethods());
  return app;
}

/** Koa, writing as the origin's own writer does, its response errors logged as they deserve. */
function koaApp(trustProxy: boolean, log: Logger): Koa {
  const app = new Koa({ proxy: trustProxy });
  // What Koa's own respond() checks before it writes (its `writable`), read as the writer reads it:
  // over HTTP/2 Koa's test left every HEAD request it answers without an answer.
  Object.defineProperty(app.response, 'writable', {
    get(this: { res: ServerResponse }) {
      return canAnswer(this.res);
    },
  });
  // Errors of a response already on its way end up here. A client that went away mid-body, a file
  // stream closed early for HEAD or 304, or a client speaking broken HTTP is routine, not a warning.
  app.on('error', (error: NodeJS.ErrnoException) => {
    const routine =
      error.code !== undefined && (CLIENT_GONE.has(error.code) || error.code.startsWith('HPE_'));
    if (routine) {
      log.debug({ err: error }, 'response error: the client went away');
    } else {
      report(log, 'ORIGIN_RESPONSE_FAILED', { err: error });
    }
  });
  return app;
}

/** GET (and HEAD) of any path that is not a file: the pages step's. */
function pagesRouter(pages: Pages): Router {
  const router = new Router();
  router.get('/{*path}', async (ctx, next) => {
    if (FILE_LIKE.test(ctx.path)) {
      // A missing file is a plain 404: rendering the app for it would waste a render per bad URL.
      ctx.status = 404;
      ctx.body = 'Not Found';
      return;
    }
    await pages.step(ctx, next);
  });
  return router;
}
