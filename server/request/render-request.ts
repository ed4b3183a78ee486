// What a render sees of the request: Angular's REQUEST, as a URL and headers. A route without a
// shared-cache policy sees the client's request as Angular's own server gives it; a shared page
// sees its URL and its route's declared inputs, normalized, and nothing else.
import type { IncomingHttpHeaders } from 'node:http';
import { inputHeaders } from './render-inputs.ts';

/** A render's request: its URL (the validated origin, then the target) and its headers. */
export interface RenderRequest {
  url: string;
  headers: [string, string][];
}

/** Headers a render never sees as the client sent them: Host is the validated one. */
const REPLACED = new Set(['host']);
/** Set by a proxy in front: only when TRUST_PROXY says one sets them (the guard checked them). */
const FORWARDED = 'x-forwarded-';

/**
 * The request of a route without a shared-cache policy: the client's headers, with the Host the
 * guard validated (the URL's authority) and X-Forwarded-* only from a trusted proxy.
 */
export function clientRequest(
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
  return { url, headers: seen };
}

/**
 * The request of a shared page, from its cache key (`url`, then the normalized inputs a line
 * each: render-cache/policy.ts cacheKey): the Host of its URL and those inputs, nothing else.
 */
export function sharedRequest(url: string, inputs: string): RenderRequest {
  return { url, headers: [['host', new URL(url).host], ...inputHeaders(inputs)] };
}
