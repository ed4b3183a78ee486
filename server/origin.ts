import etag from '@koa/etag';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import conditional from 'koa-conditional-get';
import serveStatic from 'koa-static';
import type { Logger } from 'pino';
import { errorHandler } from './error-handler';
import { healthEndpoints, type Readiness } from './lifecycle';
import { requestGuard } from './request-guard';
import { throttledWarning } from './throttled-log';

export interface OriginOptions {
  /** Host names the origin answers for (see config.ts); anything else gets 400 before any work. */
  allowedHosts: readonly string[];
  /** Take protocol and host from X-Forwarded-* (set only behind a proxy that sets them). */
  trustProxy: boolean;
  /** The browser build to serve files from; undefined under `ng serve`, whose dev server serves them. */
  browserDir: string | undefined;
  /** Answers a page request: prerendered, rendered or the client-side shell. */
  renderPage: Middleware;
  readiness: Readiness;
  /** Renders running and queued, reported by /healthz. */
  renderStats: () => object | undefined;
  log: Logger;
  accessLog: boolean;
}

/** Immutable for a year: the file name changes whenever the content does. */
const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** Everything else may be stored, but is revalidated with its ETag before each use. */
const REVALIDATE = 'no-cache';
/**
 * Bundles the application builder names `name-HASH.js|css` (outputHashing "all"), and the files it
 * copies to media/ with hashed names. Files from public/ keep their names and are revalidated.
 */
const HASHED_NAME = /-[A-Za-z0-9_-]{8}\.(?:js|mjs|css)$|[/\\]media[/\\][^/\\]+-[A-Za-z0-9_-]{8}\.\w+$/;
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET', 'ECONNABORTED']);
/** A last path segment with an extension asks for a file, never for a page. */
const FILE_LIKE = /\.[^/]*$/;

/**
 * The origin's request path, top to bottom: each middleware is one step of a request's story.
 */
export function createOrigin(options: OriginOptions): Koa {
  const app = new Koa({ proxy: options.trustProxy });
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
  app.use(healthEndpoints(options.readiness, options.renderStats));

  // 3. Optional access log, after the response (off by default: a line per request costs throughput).
  if (options.accessLog) {
    app.use(async (ctx, next) => {
      const start = performance.now();
      await next();
      log.info({ method: ctx.method, url: ctx.url, status: ctx.status, ms: +(performance.now() - start).toFixed(2) }, 'request');
    });
  }

  // 4. Guard: cheap rejections before any work — forged hosts, odd request targets, unsafe paths.
  app.use(requestGuard(options.allowedHosts));

  // 5. Validators: one place turns a matching If-None-Match into 304, for every kind of answer.
  app.use(conditional());
  app.use(etag());

  // 6. Files of the browser build, including prerendered pages (`<route>/index.html`).
  if (options.browserDir) {
    app.use(
      serveStatic(options.browserDir, {
        // The build writes no .br/.gz siblings; probing for them costs two fs calls per request.
        brotli: false,
        gzip: false,
        setHeaders: (res, path) => {
          res.setHeader('Cache-Control', HASHED_NAME.test(path) ? HASHED_ASSET_CACHE : REVALIDATE);
          // koa-send cannot answer Range requests: say so rather than ignore them silently.
          res.setHeader('Accept-Ranges', 'none');
        },
      }),
    );
  }

  // 7. Pages: everything else that is not a file is the Angular app's to answer.
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

  return app;
}
