import { AngularNodeAppEngine } from '@angular/ssr/node';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { respond } from '../http/answer.ts';
import type { RenderRequest } from '../request/render-request.ts';
import { engineOutput } from './app-engine.ts';
import { pageOf } from './page.ts';
import { pageRequest, type Pages } from './pages.ts';
import type { EngineOutput } from './renderer.ts';
import type { RouteInfo } from './route-matcher.ts';

export interface DevPagesOptions {
  lookupRoute: (path: string) => RouteInfo;
  trustProxy: boolean;
  log: Logger;
}

/**
 * Renders pages under `ng serve`. The dev server builds in memory (there is no dist/ for
 * CommonEngine to read) and injects its live-reload client through Angular's own engine, so
 * development renders with AngularNodeAppEngine behind the same Koa chain as production — with
 * the same request (a shared page's render sees its declared inputs alone, and reading a header
 * its route did not declare is a warning naming both) and the same answer (page.ts).
 */
export function createDevPages({ lookupRoute, trustProxy, log }: DevPagesOptions): Pages {
  const engine = new AngularNodeAppEngine();
  return {
    async step(ctx, next) {
      const route = lookupRoute(ctx.path);
      const seen = pageRequest(route, ctx, trustProxy);
      let output: EngineOutput;
      try {
        const response = await engine.handle(
          devRequest(ctx, seen, route, log),
          renderContext(route),
        );
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
      const making = { sees: seen.sees, failed: false, vary: route.vary };
      respond(ctx, pageOf(output, making).page.answer);
    },
    // Nothing is cached under `ng serve`.
    fresh: () => undefined,
  };
}

/**
 * Read by Angular's engine itself, whatever the page (@angular/ssr 22.2: its proxy headers,
 * Accept-Language for a localized build's redirect, If-None-Match for its prerendered files):
 * never the page's own input.
 */
const ENGINE_READS = /^(?:host|forwarded|x-forwarded-.*|accept-language|if-none-match)$/;

/** The Request a dev render gets: production's (pages.ts pageRequest), its headers watched on a shared route. */
function devRequest(ctx: Context, seen: RenderRequest, route: RouteInfo, log: Logger): Request {
  // Angular's engine stops a dev render when the client leaves: tell it, as its own server does.
  const controller = new AbortController();
  ctx.res.once('close', () => controller.abort());
  const request = new Request(seen.url, { headers: seen.headers, signal: controller.signal });
  const rules = route.cacheRules;
  if (rules === undefined) {
    return request;
  }
  const declared = new Set(
    (rules.inputs?.inputs ?? []).map((input) => (input.kind === 'cookie' ? 'cookie' : input.name)),
  );
  const warned = new Set<string>();
  const watch = (name: string) => {
    const header = name.toLowerCase();
    if (!declared.has(header) && !ENGINE_READS.test(header) && !warned.has(header)) {
      warned.add(header);
      log.warn(
        { route: ctx.path, input: header },
        `a shared page read the request's ${header} header, which its route does not declare: ` +
          'declare it with renderInputs() in app.routes.server.ts, or the page sees nothing there',
      );
    }
  };
  Object.defineProperty(request, 'headers', { value: new WatchedHeaders(request.headers, watch) });
  return request;
}

/**
 * Angular's REQUEST_CONTEXT of a dev render of a shared page: the cookies and headers its route
 * declares, for the app's requestCookie() to warn about a read of one it does not.
 */
function renderContext(
  route: RouteInfo,
): { renderInputs: { cookies: string[]; headers: string[] } } | undefined {
  const inputs = route.cacheRules?.inputs?.inputs;
  if (route.cacheRules === undefined) {
    return undefined;
  }
  const names = (kind: string) => (inputs ?? []).filter((i) => i.kind === kind).map((i) => i.name);
  return { renderInputs: { cookies: names('cookie'), headers: names('header') } };
}

/** Headers that report the names a render asks for. */
class WatchedHeaders extends Headers {
  readonly #read: (name: string) => void;

  constructor(init: Headers, read: (name: string) => void) {
    super(init);
    this.#read = read;
  }

  override get(name: string): string | null {
    this.#read(name);
    return super.get(name);
  }

  override has(name: string): boolean {
    this.#read(name);
    return super.has(name);
  }
}
