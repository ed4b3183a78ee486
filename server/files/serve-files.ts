import type { ServerResponse } from 'node:http';
import { relative, sep } from 'node:path';
import type { Middleware } from 'koa';
import serveStatic from 'koa-static';
import { respond } from '../http/answer.ts';
import { type Coding, negotiate } from '../http/content-coding.ts';
import { COPIES, type StaticIndex } from './static-index.ts';

/**
 * Files of the browser build and prerendered pages, from memory: a Map lookup, precomputed headers,
 * and the 304 decided from the precomputed ETag. Serving `/` through koa-static cost an fs.stat, a
 * read stream and a stat-based ETag per request; answering before the validators (and as a plain
 * function) saves async frames and a copy of the response headers per file
 * (docs/architecture.md#what-each-optimization-saves).
 */
export function filesFromMemory(index: StaticIndex): Middleware {
  return (ctx, next) => {
    const file = ctx.method === 'GET' || ctx.method === 'HEAD' ? index.get(ctx.path) : undefined;
    if (file === undefined) {
      return next();
    }
    // The writer picks the build's copy the request's Accept-Encoding prefers.
    respond(ctx, file);
    return undefined;
  };
}

/**
 * Files the index did not hold (over its size limits), from disk; a page request never gets here.
 * The coding is chosen as for files in memory (http/content-coding.ts: q-values honoured), then
 * koa-send sends that copy if the build wrote one, through an instance that looks for no other.
 */
export function filesFromDisk(browserDir: string, index: StaticIndex): Middleware {
  const setHeaders = (res: ServerResponse, path: string) => {
    // The policy of the file asked for, also when its .br or .gz copy is sent.
    const file = res.hasHeader('Content-Encoding') ? path.replace(/\.(?:br|gz)$/, '') : path;
    res.setHeader(
      'Cache-Control',
      index.cacheControl('/' + relative(browserDir, file).split(sep).join('/')),
    );
    res.setHeader('Accept-Ranges', 'none');
  };
  // Looking for a copy costs an fs call per request: only for the coding chosen.
  const byCoding = new Map<string | undefined, Middleware>(
    [undefined, ...COPIES.map(({ coding }) => coding)].map((coding) => [
      coding,
      serveStatic(browserDir, {
        brotli: coding === 'br',
        gzip: coding === 'gzip',
        setHeaders,
      }),
    ]),
  );
  return (ctx, next) => {
    const file = index.onDisk(ctx.path);
    if (file === undefined) {
      return next() as Promise<void>;
    }
    let coding: Coding | undefined;
    if (file.codings.length > 0) {
      ctx.vary('Accept-Encoding');
      coding = negotiate(ctx.get('accept-encoding') || undefined, file.codings);
    }
    return byCoding.get(coding)!(ctx, next) as Promise<void>;
  };
}
