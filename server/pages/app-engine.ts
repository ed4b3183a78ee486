import { AngularNodeAppEngine } from '@angular/ssr/node';
import { OriginError } from '../errors.ts';
import type { EngineOutput, PageEngine } from './engine.ts';

export interface AppEngineOptions {
  allowedHosts: readonly string[];
}

/** The Content-Type Angular's engine gives every page; the origin sends its own spelling instead. */
const ANGULAR_HTML = 'text/html;charset=UTF-8';

/**
 * Renders with @angular/ssr's AngularNodeAppEngine: the build's manifests (routes, critical CSS
 * plans), the app's bootstrap, and the route's status and headers as RESPONSE_INIT, which the app
 * may change while it renders. The engine matches the URL against the server routes itself, so a
 * route's `headers` and `status` come from the same list the origin reads.
 *
 * It sees the request the origin gives a render (request/render-request.ts) as Angular's REQUEST,
 * and the origin's REQUEST_CONTEXT (undeclared-reads.ts): the client's headers for a route rendered
 * per request, the declared inputs alone for a shared one.
 */
export function createAppEngine(options: AppEngineOptions): PageEngine {
  const engine = new AngularNodeAppEngine({ allowedHosts: [...options.allowedHosts] });
  return async ({ url, request, context, appReads }) => {
    // Without the request's signal: Angular cannot stop a render, its abort only rejects early,
    // which would free the limiter's slot while the render still runs. The origin gives up waiting
    // instead (pages.ts), as with CommonEngine, and the slot is held until the render ends.
    // The engine checks the request's headers (all of them, then its proxy headers) before its
    // first await: what the page reads comes after.
    const handled = engine.handle(request, context);
    appReads();
    const response = await handled;
    if (!response) {
      // Angular's engine answers nothing when the router's navigation failed (a component threw
      // while its route activated, a guard threw) or no server route matched. CommonEngine
      // sends what it rendered around the error; here there is no page: a failed render (500).
      throw new OriginError('ORIGIN_RENDER_NO_PAGE', url);
    }
    return engineOutput(response);
  };
}

/**
 * What Angular's engine answered, as the origin's engines give a page (renderer.ts EngineOutput):
 * its bytes as they are (decoding them to encode the page again showed in the render's instruction
 * count: docs/architecture.md#what-each-optimization-saves), its status, and its headers less
 * Angular's spelling of the HTML type and its own bookkeeping for its prerendered files (the origin
 * sets Content-Length and ETag for the bytes it sends).
 */
export async function engineOutput(response: Response): Promise<EngineOutput> {
  const html = Buffer.from(await response.arrayBuffer());
  const headers = new Headers(response.headers);
  if (headers.get('content-type') === ANGULAR_HTML) {
    headers.delete('content-type');
  }
  headers.delete('content-length');
  headers.delete('etag');
  return { html, status: response.status, headers };
}
