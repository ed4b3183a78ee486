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
  /**
   * For an app with personal parts: this render's token, which PersonalPart writes into the
   * markers around each placeholder (personal/page-parts.ts).
   */
  personalParts?: { token: string };
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

/** A visitor's parts of one page to render (the app's renderPart: src/app/personal-part.server.ts). */
export interface PartInput {
  parts: readonly { name: string; inputs: Record<string, unknown> }[];
  /** The page's URL: the render's location. */
  url: string;
  /** The visitor's request as the parts may see it: their declared cookies and headers alone. */
  request: Request;
  context: RenderContext;
  /** CSP_NONCE for what the render writes: the process's placeholder, filled per response. */
  nonce?: string;
  locale?: string;
}

/** What the app's renderPart made: each part's HTML, the styles they need, RESPONSE_INIT's headers. */
export interface PartOutput {
  parts: string[];
  styles: string;
  headers: Record<string, string>;
}

/** The app's renderPart: one application renders every part asked, and nothing else. */
export type PartEngine = (input: PartInput) => Promise<PartOutput>;
