// What a render sees of the request: Angular's REQUEST, as a URL and headers, made here for every
// render the origin starts — answered, bypassing the cache, coalesced, in the background, under
// `npm start`. A page whose route lets shared caches keep it sees its URL and its route's declared
// inputs, normalized, and nothing else, whether or not a cache stores it; any other page sees the
// client's request as Angular's own server gives it, and its answer is never shareable.
import type { IncomingHttpHeaders } from 'node:http';
import {
  declaredInputsText,
  firstCookies,
  inputHeaders,
  type RenderInputs,
} from './render-inputs.ts';

/** A render's request: its URL (the validated origin, then the target) and its headers. */
export interface RenderRequest {
  url: string;
  headers: [string, string][];
  /**
   * What of the visitor the render sees: `declared`, its URL and declared inputs alone (a page
   * any cache may share); `visitor`, the client's request (an answer for that visitor alone).
   */
  sees: 'declared' | 'visitor';
  /**
   * For a shared page rendered for a request: what that visitor sent and the render does not see,
   * made when a read of an undeclared input is to be said (pages/undeclared-reads.ts), never before.
   */
  withheld?: () => Withheld;
}

/** A visitor's cookie names a shared page's render does not see (sanitized, capped), and their header names. */
export interface Withheld {
  cookies: readonly string[];
  /** How many more cookie names the visitor sent than `cookies` lists. */
  moreCookies: number;
  headers: ReadonlySet<string>;
}

/** What a route says of its pages' requests: whether shared caches may keep them, and their inputs. */
export interface PageInputs {
  shared: boolean;
  inputs: RenderInputs | undefined;
}

/**
 * The request a page's render sees: for a shared page its URL and declared inputs (as the
 * request normalized them), for any other the client's headers (trustProxy: X-Forwarded-* kept).
 */
export function renderRequestFor(
  page: PageInputs,
  url: string,
  headers: IncomingHttpHeaders,
  trustProxy: boolean,
): RenderRequest {
  return page.shared
    ? sharedRequest(url, declaredInputsText(page.inputs, headers), () =>
        withheldFrom(page.inputs, headers),
      )
    : clientRequest(url, headers, trustProxy);
}

/** Headers a render never sees as the client sent them: Host is the validated one. */
const REPLACED = new Set(['host']);
/** Set by a proxy in front: only when TRUST_PROXY says one sets them (the guard checked them). */
const FORWARDED = 'x-forwarded-';

/**
 * The request of a route without a shared-cache policy: the client's headers, with the Host the
 * guard validated (the URL's authority) and X-Forwarded-* only from a trusted proxy.
 */
function clientRequest(
  url: string,
  headers: IncomingHttpHeaders,
  trustProxy: boolean,
): RenderRequest {
  const seen: [string, string][] = [['host', new URL(url).host]];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || REPLACED.has(name) || name.startsWith(':')) {
      continue;
    }
    if (!trustProxy && name.startsWith(FORWARDED)) {
      continue;
    }
    seen.push([name, Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : value]);
  }
  return { url, headers: seen, sees: 'visitor' };
}

/**
 * The request of a shared page, from its URL and its normalized inputs (a line each, as a cache
 * key holds them: render-inputs.ts inputsText): the Host of its URL and those inputs, nothing else.
 * `withheld`: what the visitor it is rendered for sent besides (undefined for a background render).
 */
export function sharedRequest(
  url: string,
  inputs: string,
  withheld?: () => Withheld,
): RenderRequest {
  return {
    url,
    headers: [['host', new URL(url).host], ...inputHeaders(inputs)],
    sees: 'declared',
    withheld,
  };
}

/** Cookie names a warning lists at most: visitors choose them. */
const MAX_NAMES = 8;
const NAME_LENGTH = 32;

/** What a visitor sent that the render of a page with these declared inputs does not see. */
export function withheldFrom(
  inputs: RenderInputs | undefined,
  headers: IncomingHttpHeaders,
): Withheld {
  const declared = new Set(
    (inputs?.inputs ?? []).filter((i) => i.kind === 'cookie').map((i) => i.name),
  );
  const names = [...firstCookies(headers.cookie).keys()].filter(
    (name) => name !== '' && !declared.has(name),
  );
  const cookies = names
    .slice(0, MAX_NAMES)
    .map((name) => name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, NAME_LENGTH));
  return {
    cookies,
    moreCookies: names.length - cookies.length,
    headers: new Set(Object.keys(headers)),
  };
}
