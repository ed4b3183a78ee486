import { AngularNodeAppEngine } from '@angular/ssr/node';
import type { Logger } from 'pino';
import { respond } from '../http/answer.ts';
import { engineOutput } from './app-engine.ts';
import { pageOf } from './page.ts';
import { pageRequest, pageRoute, type Pages } from './pages.ts';
import type { EngineOutput } from './renderer.ts';
import type { RouteInfo } from './route-matcher.ts';
import type { UndeclaredReads } from './undeclared-reads.ts';

export interface DevPagesOptions {
  lookupRoute: (path: string) => RouteInfo;
  trustProxy: boolean;
  /** What a shared page's render reads that its route does not declare, said as in production. */
  reads: UndeclaredReads;
  log: Logger;
}

/**
 * Renders pages under `ng serve`. The dev server builds in memory (there is no dist/ for
 * CommonEngine to read) and injects its live-reload client through Angular's own engine, so
 * development renders with AngularNodeAppEngine behind the same Koa chain as production — with
 * the same request (a shared page's render sees its declared inputs alone, and a read of one its
 * route does not declare is said: undeclared-reads.ts) and the same answer (page.ts).
 */
export function createDevPages({ lookupRoute, trustProxy, reads, log }: DevPagesOptions): Pages {
  const engine = new AngularNodeAppEngine();
  return {
    async step(ctx, next) {
      const route = lookupRoute(ctx.path);
      const seen = pageRequest(route, ctx, trustProxy);
      // Angular's engine stops a dev render when the client leaves: tell it, as its own server does.
      const controller = new AbortController();
      ctx.res.once('close', () => controller.abort());
      const input = reads.inputFor(seen, route, controller.signal);
      let output: EngineOutput;
      try {
        const handled = engine.handle(input.request, input.context);
        input.appReads();
        const response = await handled;
        if (!response) {
          await next();
          return;
        }
        output = await engineOutput(response);
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
      if (input.refused !== undefined) {
        throw input.refused;
      }
      const making = { sees: seen.sees, failed: false, vary: route.vary };
      respond(ctx, pageOf(output, making).page.answer);
    },
    // Nothing is cached under `ng serve`.
    fresh: () => undefined,
    routeOf: (path) => pageRoute(lookupRoute(path)),
  };
}
