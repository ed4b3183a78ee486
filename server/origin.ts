import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { relative, sep } from 'node:path';
import etag from '@koa/etag';
import Router from '@koa/router';
import accepts, { type Accepts } from 'accepts';
import fresh from 'fresh';
import Koa, { type Context, type Middleware } from 'koa';
import conditional from 'koa-conditional-get';
import serveStatic from 'koa-static';
import type { Logger } from 'pino';
import type { CommonEnginePages } from './common-engine-pages';
import { errorHandler } from './error-handler';
import { healthEndpoints, type Readiness } from './lifecycle';
import { countHostHeaders, RequestOrigins, requestGuard } from './request-guard';
import { cacheControlFor, REVALIDATE, type StaticFile, type StaticIndex } from './static-index';
import { throttledWarning } from './throttled-log';

export interface OriginOptions {
  /** Host names the origin answers for (see config.ts); anything else gets 400 before any work. */
  allowedHosts: readonly string[];
  /** Take protocol and host from X-Forwarded-* (set only behind a proxy that sets them). */
  trustProxy: boolean;
  /** The browser build and its index; undefined under `ng serve`, whose dev server serves files. */
  files: { browserDir: string; index: StaticIndex } | undefined;
  /** Answers a page request: prerendered, rendered, cached or the client-side shell. */
  renderPage: Middleware;
  /** Fresh pages of the render cache, for step 0; undefined when there is no cache. */
  freshCachedPage: CommonEnginePages['freshCachedPage'] | undefined;
  readiness: Readiness;
  /** Renders running and queued, reported by /healthz. */
  renderStats: () => object | undefined;
  /** The render cache's entries, bytes and counters, reported by /healthz. */
  renderCacheStats: () => object | undefined;
  /** Which process this is (pid, cluster worker id and size), reported by /healthz. */
  processInfo: { pid: number; worker?: number; workers?: number };
  log: Logger;
  accessLog: boolean;
  /** Step 0: answer what step 5 would answer from memory without going through Koa. */
  fastPath: boolean;
}

const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET', 'ECONNABORTED']);
/** A last path segment with an extension asks for a file, never for a page. */
const FILE_LIKE = /\.[^/]*$/;

/**
 * The origin's request path, top to bottom: each middleware is one step of a request's story.
 * Returns the server's request listener.
 */
export function createOrigin(options: OriginOptions): RequestListener {
  const app = new Koa({ proxy: options.trustProxy });
  const origins = new RequestOrigins(options.trustProxy);
  let answeredBeforeKoa = 0;
  const { log } = options;
  // Errors of a response already on its way end up here. A client that went away mid-body, a file
  // stream closed early for HEAD or 304, or a client speaking broken HTTP is routine, not a warning.
  app.on('error', (error: NodeJS.ErrnoException) => {
    const routine = error.code !== undefined && (CLIENT_GONE.has(error.code) || error.code.startsWith('HPE_'));
    log[routine ? 'debug' : 'warn']({ err: error }, 'response error');
  });

  // 1. Failures become a clean status and page, never a stack; 5xx are logged once.
  app.use(errorHandler(log, throttledWarning(log, 'shedding load: render queue full')));

  // 2. Liveness and readiness for the supervisor and the load balancer.
  app.use(
    healthEndpoints(options.readiness, () => ({
      ...options.processInfo,
      renders: options.renderStats(),
      renderCache: options.renderCacheStats(),
      answeredBeforeKoa,
    })),
  );

  // 3. Optional access log, after the response (off by default: a line per request costs throughput).
  if (options.accessLog) {
    app.use(async (ctx, next) => {
      const start = performance.now();
      await next();
      log.info({ method: ctx.method, url: ctx.url, status: ctx.status, ms: +(performance.now() - start).toFixed(2) }, 'request');
    });
  }

  // 4. Guard: cheap rejections before any work — forged or malformed hosts, odd request targets,
  //    unsafe paths. Leaves the request's origin (requestOrigin), the only part of the headers a render sees.
  app.use(requestGuard(options.allowedHosts, origins));

  // 5. Files of the browser build and prerendered pages, from memory: a Map lookup, precomputed
  //    headers, and the 304 decided here from the precomputed ETag with the same `fresh` check
  //    koa-conditional-get uses. Serving `/` through koa-static cost an fs.stat, a read stream and
  //    a stat-based ETag per request; running before the validators (and as a plain function)
  //    saves async frames and a copy of the response headers per file (see bench/README.md).
  if (options.files) {
    const { index } = options.files;
    app.use((ctx, next) => {
      const file = ctx.method === 'GET' || ctx.method === 'HEAD' ? index.get(ctx.path) : undefined;
      return file === undefined ? next() : sendFile(ctx, representation(file, ctx.accept));
    });
  }

  // 6. Validators for everything else: one place turns a matching If-None-Match into 304.
  app.use(conditional());
  app.use(etag());

  // 7. Files the index did not hold (over its size limits), from disk; a page request never gets here.
  if (options.files) {
    const { index, browserDir } = options.files;
    const fromDisk = serveStatic(browserDir, {
      // Looking for .br/.gz copies costs two fs calls per request: only when the build has some.
      brotli: index.precompressed,
      gzip: index.precompressed,
      setHeaders: (res, path) => {
        // The policy of the file asked for, also when its .br or .gz copy is sent.
        const file = res.hasHeader('Content-Encoding') ? path.replace(/\.(?:br|gz)$/, '') : path;
        res.setHeader('Cache-Control', cacheControlFor('/' + relative(browserDir, file).split(sep).join('/')));
        res.setHeader('Accept-Ranges', 'none');
      },
    });
    app.use((ctx, next) => {
      const file = index.onDisk(ctx.path);
      if (file === undefined) {
        return next();
      }
      if (file.encoded) {
        ctx.vary('Accept-Encoding');
      }
      return fromDisk(ctx, next);
    });
  }

  // 8. Pages: everything else that is not a file is the Angular app's to answer.
  const router = new Router();
  router.get('/{*path}', async (ctx, next) => {
    if (FILE_LIKE.test(ctx.path)) {
      // A missing file is a plain 404: rendering the app for it would waste a render per bad URL.
      ctx.status = 404;
      ctx.body = 'Not Found';
      return;
    }
    ctx.set('Cache-Control', REVALIDATE);
    await options.renderPage(ctx, next);
  });
  app.use(router.routes());
  // Pages answer GET and HEAD only: 405 with Allow for other methods, OPTIONS lists them.
  app.use(router.allowedMethods());

  const handle = app.callback();
  if (!options.files || !options.fastPath || options.accessLog) {
    return handle;
  }
  // 0. Before all of the above: a request that steps 1-4 would let through untouched and step 5
  //    would answer from memory gets the same bytes without Koa's context, compose and respond
  //    (a 304 for `/` cost 37 µs of server CPU through Koa, 22 µs here: bench/README.md, origin-koa).
  //    Fresh pages of the render cache are answered here too, for a plain target (no query, nothing
  //    to decode). Middleware added above step 5 does not see these requests: turn this off
  //    (FAST_PATH=false) if it must.
  const answerFromMemory = fastPath(options.files.index, options.readiness, origins, options.freshCachedPage);
  return (req, res) => {
    if (answerFromMemory(req, res)) {
      answeredBeforeKoa++;
    } else {
      handle(req, res);
    }
  };
}

/** Paths step 2 answers itself, whatever the index holds. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Step 5 (and a fresh render-cache hit of step 8) for the requests steps 1-4 would pass untouched:
 * GET or HEAD, one Host header with raw values the guard has allowed before, not draining, and
 * the target exactly the path of a file held in memory (nothing to decode, no query), or a plain
 * page path (no query, `%`, `\\` or extension) whose cached page is fresh. Anything else: false,
 * and Koa answers it.
 */
function fastPath(
  index: StaticIndex,
  readiness: Readiness,
  origins: RequestOrigins,
  freshCachedPage: OriginOptions['freshCachedPage'],
) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !readiness.ready) {
      return false;
    }
    const target = req.url!;
    if (HEALTH_PATHS.has(target) || countHostHeaders(req.rawHeaders) > 1) {
      return false;
    }
    const origin = origins.get(req);
    if (origin === undefined) {
      return false;
    }
    const file = index.verbatim(target);
    if (file !== undefined) {
      const sent = file.encoded ? representation(file, accepts(req)) : file;
      // One writeHead with a flat header list: Koa's setHeader per header copies them into an object first.
      if (fresh(req.headers, sent.validators)) {
        res.writeHead(304, sent.notModifiedHeaders);
        res.end();
      } else {
        res.writeHead(200, sent.headers);
        res.end(req.method === 'HEAD' ? undefined : sent.body);
      }
      return true;
    }
    // A cached page through Koa cost ~195 µs of server CPU against ~140 for a prerendered page here (bench, ssr-cached vs ssg).
    if (freshCachedPage === undefined || !PLAIN_PAGE_TARGET.test(target) || index.get(target) || index.onDisk(target)) {
      return false;
    }
    const cached = freshCachedPage(origin, target, req.headers);
    if (cached === undefined || cached.page.status !== 200) {
      return false;
    }
    // What koa-conditional-get and Koa's respond() send: a 304 drops Content-Type and Content-Length.
    if (fresh(req.headers, { etag: cached.page.etag })) {
      res.writeHead(304, cached.headers.filter((_, i, all) => all[i - (i % 2)].toLowerCase() !== 'content-type'));
      res.end();
    } else {
      res.writeHead(200, [...cached.headers, 'Content-Length', String(cached.page.body.length)]);
      res.end(req.method === 'HEAD' ? undefined : cached.page.body);
    }
    return true;
  };
}

/** A page path step 0 may answer from the render cache: short, no query, nothing to decode, no extension. */
const PLAIN_PAGE_TARGET = /^\/(?=[^?%\\]{0,8190}$)(?:[^/?%\\]*\/)*[^/.?%\\]*$/;

/**
 * The build's .br copy of a file if the client accepts brotli, else its .gz copy if it accepts
 * gzip, else the file itself: the rule koa-send applies to the files served from disk.
 */
function representation(file: StaticFile, accept: Accepts): StaticFile {
  return file.encoded?.find(({ encoding }) => accept.encodings(encoding, 'identity') === encoding)?.file ?? file;
}

/** Answers from memory: precomputed headers, and 304 when the client's copy is current. */
function sendFile(ctx: Context, file: StaticFile): void {
  const notModified = fresh(ctx.req.headers, file.validators);
  const headers = notModified ? file.notModifiedHeaders : file.headers;
  for (let i = 0; i < headers.length; i += 2) {
    ctx.res.setHeader(headers[i], headers[i + 1]);
  }
  if (notModified) {
    ctx.status = 304;
  } else {
    ctx.body = file.body;
  }
}
