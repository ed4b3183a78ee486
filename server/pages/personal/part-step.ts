// partStep: `/_origin/part/<build>/<n><page path>?<page query>`, the n-th personal part of a page on
// its own, which a surrogate includes into the page's template (esi-template.ts) with the visitor's
// cookies. Nothing in the URL names the visitor; the build in it keeps a template of one build from
// ever getting a part of another during a deploy (it gets nothing, and the browser renders the
// part itself after hydration, as without the origin).
import type { Middleware } from 'koa';
import { nameRequest } from '../../channels.ts';
import { OriginError } from '../../errors.ts';
import { answer, respond } from '../../http/answer.ts';
import type { Pages } from '../pages.ts';

export const PART_PREFIX = '/_origin/part/';
/** How traces and logs name every part request: never by its URL. */
export const PART_ROUTE = '/_origin/part';

const PART_PATH = /^\/_origin\/part\/([A-Za-z0-9_-]{1,64})\/(\d{1,4})(\/.*)$/;

/** What a part of another build gets: nothing, for this browser alone. */
const OTHER_BUILD = answer(
  200,
  ['Content-Type', 'text/html; charset=utf-8', 'Cache-Control', 'private, no-store'],
  Buffer.alloc(0),
  { compress: false },
);

export function partStep(pages: Pages, build: string): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(PART_PREFIX)) {
      await next();
      return;
    }
    nameRequest({ res: ctx.res, route: PART_ROUTE });
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new OriginError('ORIGIN_METHOD_NOT_ALLOWED');
    }
    const asked = PART_PATH.exec(ctx.path);
    if (asked === null) {
      throw new OriginError('ORIGIN_PART_NOT_FOUND');
    }
    const [, of, index, path] = asked;
    if (of !== build) {
      respond(ctx, OTHER_BUILD);
      return;
    }
    await pages.part(ctx, Number(index), path);
  };
}
