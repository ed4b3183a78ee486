import { relative, sep } from 'node:path';
import type { Accepts } from 'accepts';
import type { Middleware } from 'koa';
import serveStatic from 'koa-static';
import { respond } from '../http/answer.ts';
import { cacheControlFor, type StaticFile, type StaticIndex } from './static-index.ts';

/**
 * The build's .br copy of a file if the client accepts brotli, else its .gz copy if it accepts
 * gzip, else the file itself: the rule koa-send applies to the files served from disk.
 */
export function representation(file: StaticFile, accept: Accepts): StaticFile {
  return (
    file.encoded?.find(({ encoding }) => accept.encodings(encoding, 'identity') === encoding)
      ?.file ?? file
  );
}

/**
 * Files of the browser build and prerendered pages, from memory: a Map lookup, precomputed headers,
 * and the 304 decided from the precomputed ETag. Serving `/` through koa-static cost an fs.stat, a
 * read stream and a stat-based ETag per request; answering before the validators (and as a plain
 * function) saves async frames and a copy of the response headers per file (bench/README.md).
 */
export function filesFromMemory(index: StaticIndex): Middleware {
  return (ctx, next) => {
    const file = ctx.method === 'GET' || ctx.method === 'HEAD' ? index.get(ctx.path) : undefined;
    if (file === undefined) {
      return next();
    }
    respond(ctx, representation(file, ctx.accept));
    return undefined;
  };
}

/** Files the index did not hold (over its size limits), from disk; a page request never gets here. */
export function filesFromDisk(browserDir: string, index: StaticIndex): Middleware {
  const fromDisk: Middleware = serveStatic(browserDir, {
    // Looking for .br/.gz copies costs two fs calls per request: only when the build has some.
    brotli: index.precompressed,
    gzip: index.precompressed,
    setHeaders: (res, path) => {
      // The policy of the file asked for, also when its .br or .gz copy is sent.
      const file = res.hasHeader('Content-Encoding') ? path.replace(/\.(?:br|gz)$/, '') : path;
      res.setHeader(
        'Cache-Control',
        cacheControlFor('/' + relative(browserDir, file).split(sep).join('/')),
      );
      res.setHeader('Accept-Ranges', 'none');
    },
  });
  return (ctx, next) => {
    const file = index.onDisk(ctx.path);
    if (file === undefined) {
      return next() as Promise<void>;
    }
    if (file.encoded) {
      ctx.vary('Accept-Encoding');
    }
    return fromDisk(ctx, next) as Promise<void>;
  };
}
