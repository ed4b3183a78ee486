import type { Middleware } from 'koa';
import { writeEarlyHints } from '../http/answer.ts';
import { FILE_LIKE } from '../request/url-path.ts';
import type { PageHints } from './page-hints.ts';

/** EARLY_HINTS: a 103 over HTTP/2 only (where browsers act on it), over HTTP/1.1 too, or neither 103 nor Link. */
export type EarlyHintsMode = 'http2' | 'always' | 'off';
export const EARLY_HINTS_MODES: readonly EarlyHintsMode[] = ['http2', 'always', 'off'];

/**
 * earlyHints: a page request (a GET for a path that names no file) gets its hints in a `103 Early
 * Hints` before its page is looked up in the render cache or rendered, so that the browser fetches
 * the page's stylesheet, scripts and route chunks while it waits; its final answer repeats them in
 * `Link`. Browsers act on a 103 over HTTP/2 only; over HTTP/1.1 a 103 is sent with `always` alone,
 * since older proxies and load generators take it for the answer (docs/architecture.md).
 */
export function earlyHints(hints: PageHints, mode: Exclude<EarlyHintsMode, 'off'>): Middleware {
  const http1 = mode === 'always';
  return (ctx, next) => {
    const { method } = ctx;
    if ((method === 'GET' || method === 'HEAD') && !FILE_LIKE.test(ctx.path)) {
      const header = hints.header(ctx.path);
      if (header !== undefined) {
        // HEAD gets the Link its GET would, and no 103: no page follows.
        const links = method === 'GET' ? hints.links(ctx.path) : [];
        writeEarlyHints(ctx.req, ctx.res, { links, header, http1 });
      }
    }
    return next();
  };
}
