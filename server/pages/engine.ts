// What an engine is: it renders the page of a request for a route, from a URL and the request the
// render may see, and nothing else (bounds, timeouts, caching and the answer are the origin's:
// renderer.ts, pages.ts). The engines are common-engine.ts and app-engine.ts.
import type { RouteInfo } from './route-matcher.ts';

/**
 * Angular's REQUEST_CONTEXT of a render: the request inputs the app's requestCookie() asks the
 * origin for by name (src/app/render-inputs.ts), so that a read of an undeclared one is said with
 * its name, where a read of the raw `cookie` header can only say what was withheld.
 */
export interface RenderContext {
  renderInputs: {
    /** The cookie's value as this render may see it; undefined when it has none (or may not). */
    cookie(name: string): string | undefined;
  };
}

/** What an engine made of a URL: the page and what the app set through RESPONSE_INIT. */
export interface EngineOutput {
  /**
   * The page: CommonEngine's string, or the bytes of AngularNodeAppEngine's Response as they are
   * (never decoded only to be encoded again: docs/architecture.md#what-each-optimization-saves).
   */
  html: string | Buffer;
  status: number;
  headers: Headers;
}

/** What an engine renders from: the URL, and Angular's REQUEST and REQUEST_CONTEXT for the render. */
export interface EngineInput {
  /** The validated origin plus the request target (request/render-request.ts). */
  url: string;
  /** The request the render sees: a shared page's, its URL and declared inputs alone. */
  request: Request;
  context: RenderContext;
  /** Set when the render read an input its route does not declare under RENDER_INPUTS_STRICT. */
  refused?: Error;
  /**
   * From now on, reads of the request are the app's: called by the engine once its own reads are
   * done (Angular's engine goes through every header, and reads its proxy headers, as it starts).
   */
  appReads: () => void;
}

/**
 * An engine: renders the page of a request for a route, and nothing else. Bounds, timeouts,
 * caching and the answer are the origin's.
 */
export type PageEngine = (
  input: EngineInput,
  route: RouteInfo,
  signal: AbortSignal | undefined,
) => Promise<EngineOutput>;
