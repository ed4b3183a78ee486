import { AngularNodeAppEngine } from '@angular/ssr/node';
import type { Middleware } from 'koa';

/**
 * Renders pages under `ng serve`. The dev server builds in memory (there is no dist/ for
 * CommonEngine to read) and injects its live-reload client through Angular's own engine, so
 * development renders with AngularNodeAppEngine behind the same Koa chain as production.
 */
export function createDevPages(): Middleware {
  const engine = new AngularNodeAppEngine();
  return async (ctx, next) => {
    const response = await engine.handle(ctx.req);
    if (!response) {
      return next();
    }
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    ctx.body = Buffer.from(await response.arrayBuffer());
  };
}
