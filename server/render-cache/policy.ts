// What the render cache may store and serve, read from standard HTTP: a route's Cache-Control
// (RFC 9111, RFC 5861) and No-Vary-Search, and the key a request's page is stored under.
import type { IncomingHttpHeaders } from 'node:http';
import {
  declaredInputsText,
  parseRenderInputs,
  RENDER_INPUTS_HEADER,
  type RenderInputs,
} from '../request/render-inputs.ts';
import { hasDotSegment } from '../request/url-path.ts';
import { parseNoVarySearch, significantParams } from './no-vary-search.ts';

/** How long a shared cache may use a response (RFC 9111 §4.2, RFC 5861), in milliseconds. */
export interface SharedCachePolicy {
  freshMs: number;
  staleWhileRevalidateMs: number;
  staleIfErrorMs: number;
}

/**
 * The policy a shared cache (a CDN, and this origin's render cache) may apply to a response with
 * this Cache-Control, or undefined if it must not store it: `private`, `no-store`, `no-cache`, no
 * `s-maxage`/`max-age`, or a directive it cannot read (RFC 9111 §4.2.1: then treat it as stale).
 * `s-maxage` wins over `max-age` for shared caches; `must-revalidate` and `proxy-revalidate` forbid
 * serving stale, so they cancel `stale-while-revalidate` and `stale-if-error`.
 */
export function sharedCachePolicy(cacheControl: string | undefined): SharedCachePolicy | undefined {
  if (cacheControl === undefined) {
    return undefined;
  }
  const directives = new Map<string, string | true>();
  for (const part of cacheControl.split(',')) {
    const match = DIRECTIVE.exec(part);
    if (match === null) {
      if (part.trim() === '') {
        continue;
      }
      return undefined;
    }
    const name = match[1].toLowerCase();
    if (directives.has(name)) {
      return undefined;
    }
    directives.set(name, match[2] ?? match[3] ?? true);
  }
  if (directives.has('private') || directives.has('no-store') || directives.has('no-cache')) {
    return undefined;
  }
  const fresh = seconds(directives.get('s-maxage') ?? directives.get('max-age'));
  if (fresh === undefined) {
    return undefined;
  }
  const mayServeStale = !directives.has('must-revalidate') && !directives.has('proxy-revalidate');
  const staleWhileRevalidate = mayServeStale
    ? (seconds(directives.get('stale-while-revalidate')) ?? 0)
    : 0;
  const staleIfError = mayServeStale ? (seconds(directives.get('stale-if-error')) ?? 0) : 0;
  if (fresh === 0 && staleWhileRevalidate === 0) {
    return undefined;
  }
  return {
    freshMs: fresh * 1000,
    staleWhileRevalidateMs: staleWhileRevalidate * 1000,
    staleIfErrorMs: staleIfError * 1000,
  };
}

/** `name`, `name=token` or `name="quoted"`, with optional whitespace around. */
const DIRECTIVE =
  /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)(?:=(?:([A-Za-z0-9!#$%&'*+.^_`|~-]+)|"([^"\\]*)"))?\s*$/;

/** delta-seconds (RFC 9111 §1.2.2), capped at a year: undefined when absent or not digits. */
function seconds(value: string | true | undefined): number | undefined {
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    return undefined;
  }
  return Math.min(Number(value), 365 * 24 * 3600);
}

/**
 * The policy under which a rendered answer may be stored, or undefined: only a status the route
 * declared or 200, no Set-Cookie, a Cache-Control a shared cache may use, and no Vary but
 * Accept-Encoding. These are the answer's final values: the app may change any of them while rendering.
 */
export function storablePolicy(
  status: number,
  routeStatus: number | undefined,
  headers: Headers,
): SharedCachePolicy | undefined {
  const vary = headers.get('vary');
  const storable =
    (status === 200 || status === routeStatus) &&
    !headers.has('set-cookie') &&
    (vary === null ||
      vary.split(',').every((name) => name.trim().toLowerCase() === 'accept-encoding'));
  return storable ? sharedCachePolicy(headers.get('cache-control') ?? undefined) : undefined;
}

/** What a cacheable route declares about the requests that may share its pages. */
export interface RouteCacheRules {
  /**
   * Query parameters that select another page, from the route's No-Vary-Search header; every
   * other parameter is left out of the key and out of the URL rendered. `undefined`: the route
   * declares nothing usable (no header, or one that cannot be read), so a request with a query
   * string is rendered and never served from the cache.
   */
  significantParams: ((name: string) => boolean) | undefined;
  /** The cookies and headers its page depends on, each a closed set (request/render-inputs.ts). */
  inputs: RenderInputs | undefined;
}

/**
 * The rules of a route whose declared headers make its pages cacheable, else undefined.
 * No-Vary-Search says which query parameters matter (no-vary-search.ts): `params` ignores
 * every parameter, `params, except=("page")` all but those listed, `params=("utm_source")` only
 * those listed. A value it cannot read counts as no header (query strings are rendered, never
 * cached), and is passed to `onUnreadable` so that the start can say so. A wrong declaration of
 * its render inputs stops the start, naming `route` (request/render-inputs.ts).
 */
export function routeCacheRules(
  headers: Record<string, string> | undefined,
  onUnreadable?: (noVarySearch: string) => void,
  route = '(unnamed)',
): RouteCacheRules | undefined {
  const byName = new Map(
    Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
  if (sharedCachePolicy(byName.get('cache-control')) === undefined) {
    return undefined;
  }
  const noVarySearch = byName.get('no-vary-search');
  const variance = noVarySearch === undefined ? undefined : parseNoVarySearch(noVarySearch);
  if (noVarySearch !== undefined && variance === undefined) {
    onUnreadable?.(noVarySearch);
  }
  return {
    significantParams: variance && significantParams(variance),
    inputs: parseRenderInputs(route, byName.get(RENDER_INPUTS_HEADER)),
  };
}

/** Why a request is rendered instead of served from (or stored in) the cache: the `detail` of Cache-Status. */
export type Bypass = 'path' | 'query';

/**
 * The cache key of a request for a cacheable route — the validated origin, the path and the
 * significant query parameters in a fixed order (the URL rendered), then the route's declared
 * inputs as the request normalized them, a line each — or why the request must not share a page.
 * The page for a key is rendered from the key alone (pages/pages.ts), so whatever else the request
 * carried — other cookies, credentials, other headers — cannot end up in a page served to
 * someone else.
 */
export function cacheKey(
  rules: RouteCacheRules,
  origin: string,
  path: string,
  querystring: string,
  headers: IncomingHttpHeaders,
): { key: string } | { bypass: Bypass } {
  // One spelling per page: Angular's router and the origin's route lookup may read `//`, `;`, a
  // trailing slash or percent-encoding differently, and a disagreement must cost a render.
  if (!CANONICAL_PATH.test(path) || hasDotSegment(path)) {
    return { bypass: 'path' };
  }
  const inputs = rules.inputs === undefined ? '' : `\n${declaredInputsText(rules.inputs, headers)}`;
  if (querystring === '') {
    return { key: origin + path + inputs };
  }
  if (rules.significantParams === undefined) {
    return { bypass: 'query' };
  }
  const kept = [...new URLSearchParams(querystring)].filter(([name]) =>
    rules.significantParams!(name),
  );
  // Sorted by name (stable, so repeated names keep their order): one key per set of parameters.
  kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const url = kept.length === 0 ? origin + path : `${origin}${path}?${new URLSearchParams(kept)}`;
  return { key: url + inputs };
}

/** A key's URL (what is rendered) and its inputs' lines (what the render's request carries). */
export function keyParts(key: string): { url: string; inputs: string } {
  const end = key.indexOf('\n');
  return end === -1
    ? { url: key, inputs: '' }
    : { url: key.slice(0, end), inputs: key.slice(end + 1) };
}

/**
 * `/` or segments of unreserved characters and the sub-delims Angular's URL parser reads as
 * themselves: no `;` (matrix parameters), `(` `)` (auxiliary routes), `%`, empty segment or
 * trailing slash.
 */
const CANONICAL_PATH = /^\/(?:[A-Za-z0-9\-._~!$&'*+,=:@]+(?:\/[A-Za-z0-9\-._~!$&'*+,=:@]+)*)?$/;
