import etag from '@koa/etag';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import conditional from 'koa-conditional-get';
import serveStatic from 'koa-static';
import { createHostCheck } from './allowed-hosts';

export interface OriginOptions {
  /** Host names the origin answers for (see config.ts); anything else gets 400 before any work. */
  allowedHosts: readonly string[];
  /** The browser build to serve files from; undefined under `ng serve`, whose dev server serves them. */
  browserDir: string | undefined;
  /** Answers a page request: prerendered, rendered or the client-side shell. */
  renderPage: Middleware;
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
/** A last path segment with an extension asks for a file, never for a page. */
const FILE_LIKE = /\.[^/]*$/;

/**
 * The origin's request path, top to bottom: each middleware is one step of a request's story.
 */
export function createOrigin(options: OriginOptions): Koa {
  const app = new Koa();
  const isAllowedHost = createHostCheck(options.allowedHosts);

  // 1. Guard: only hosts we serve. Nothing is read or rendered for a forged Host header.
  app.use(async (ctx, next) => {
    if (!isAllowedHost(ctx.hostname.toLowerCase())) {
      ctx.throw(400, 'Host not allowed');
    }
    await next();
  });

  // 2. Validators: one place turns a matching If-None-Match into 304, for every kind of answer.
  app.use(conditional());
  app.use(etag());

  // 3. Files of the browser build, including prerendered pages (`<route>/index.html`).
  if (options.browserDir) {
    app.use(
      serveStatic(options.browserDir, {
        // The build writes no .br/.gz siblings; probing for them costs two fs calls per request.
        brotli: false,
        gzip: false,
        setHeaders: (res, path) => {
          res.setHeader('Cache-Control', HASHED_NAME.test(path) ? HASHED_ASSET_CACHE : REVALIDATE);
        },
      }),
    );
  }

  // 4. Pages: everything else that is not a file is the Angular app's to answer.
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
  // Pages answer GET and HEAD only: 405 with Allow for other methods, 501 for unknown ones.
  app.use(router.allowedMethods());

  return app;
}
