import { AngularNodeAppEngine } from '@angular/ssr/node';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { REVALIDATE } from '../files/static-index.ts';

/**
 * Renders pages under `ng serve`. The dev server builds in memory (there is no dist/ for
 * CommonEngine to read) and injects its live-reload client through Angular's own engine, so
 * development renders with AngularNodeAppEngine behind the same Koa chain as production.
 */
export function createDevPages(log: Logger): Middleware {
  const engine = new AngularNodeAppEngine();
  return async (ctx, next) => {
    let response: Response | null;
    let body: Buffer;
    try {
      response = await engine.handle(ctx.req);
      if (!response) {
        await next();
        return;
      }
      body = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      // The engine aborts the render when the client goes (a reload, a closed tab): routine while
      // developing, so a debug line, not an error with a stack. Any other failure is an error.
      if (!ctx.writable) {
        log.debug({ url: ctx.url }, 'client left during a dev render');
        ctx.respond = false;
        return;
      }
      throw error;
    }
    ctx.status = response.status;
    // As in production: revalidate before each use unless the route says otherwise.
    ctx.set('Cache-Control', REVALIDATE);
    response.headers.forEach((value, name) => ctx.set(name, value));
    ctx.body = body;
  };
}
