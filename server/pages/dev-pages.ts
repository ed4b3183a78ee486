import { AngularNodeAppEngine } from '@angular/ssr/node';
import type { Logger } from 'pino';
import { answer, REVALIDATE, respond } from '../http/answer.ts';
import { strongEtag } from '../http/entity-tag.ts';
import type { Pages } from './pages.ts';

/**
 * Renders pages under `ng serve`. The dev server builds in memory (there is no dist/ for
 * CommonEngine to read) and injects its live-reload client through Angular's own engine, so
 * development renders with AngularNodeAppEngine behind the same Koa chain as production.
 */
export function createDevPages(log: Logger): Pages {
  const engine = new AngularNodeAppEngine();
  return {
    async step(ctx, next) {
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
      // As in production: revalidate before each use unless the route says otherwise, and a
      // strong ETag for a 2xx answer.
      const headers = new Headers({ 'Cache-Control': REVALIDATE });
      response.headers.forEach((value, name) => headers.set(name, value));
      headers.delete('content-length');
      const etag = response.ok ? (headers.get('etag') ?? strongEtag(body)) : undefined;
      if (etag !== undefined) {
        headers.set('etag', etag);
      }
      respond(
        ctx,
        answer(response.status, [...headers].flat(), body, {
          validators: etag === undefined ? undefined : { etag },
        }),
      );
    },
    // Nothing is cached under `ng serve`.
    fresh: () => undefined,
  };
}
