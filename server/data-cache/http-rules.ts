// What the data cache may keep and reuse of what renders fetch: RFC 9111's rules for a shared cache
// as http-cache-semantics implements them (Vary, validators, Age, s-maxage, private, no-store,
// Authorization, heuristics), and the origin's stricter ones on top: a response to a request with
// credentials (Authorization or a cookie) is kept only when its API says `public` or `s-maxage`,
// never one that sets a cookie, a 5xx, `Vary: *` or a redirect's end.
import CachePolicy from 'http-cache-semantics';
import { isGroupName, MAX_GROUPS, parseCacheGroups } from '../cache/cache-groups.ts';
import type { SharedCachePolicy } from '../cache/entry.ts';
import { cacheControlDirectives, directiveSeconds } from '../http/cache-control.ts';
import type { CachedData } from './data-entry.ts';

/**
 * A route's own declaration (`Data-Cache: off` among its headers) that its renders' fetches go past
 * the data cache: for the origin alone, never sent. Here, apart from the route matcher, so that
 * what strips it from answers does not load Angular.
 */
export const DATA_CACHE_HEADER = 'data-cache';

/** The prefix of groups an API names (Cache-Tag, Surrogate-Key, Cache-Groups): apart from the app's own. */
export const API_GROUP_PREFIX = 'api:';

/**
 * How long an entry with a validator is kept past its use, to be revalidated with it: a 304 costs
 * the API and the network a fraction of the body.
 */
const REVALIDATABLE_MS = 10 * 60_000;

/** A request as http-cache-semantics reads it (lower-case header names, the URL's Host). */
export function requestOf(request: Request): CachePolicy.HttpRequest {
  const headers: Record<string, string> = { host: new URL(request.url).host };
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { url: request.url, method: request.method, headers };
}

/** A response's headers as http-cache-semantics reads them; Set-Cookie's values joined apart. */
export function headersOf(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** Whether a request carries credentials: then only a response marked public may be kept. */
export function credentialed(request: Request): boolean {
  return request.headers.has('authorization') || request.headers.has('cookie');
}

/**
 * Why the data cache must not keep a response, or undefined when it may: RFC 9111 for a shared
 * cache, and the origin's stricter rules (see above).
 */
export function whyNotStored(
  request: Request,
  response: Response,
  semantics: CachePolicy,
): string | undefined {
  const directives = cacheControlDirectives(response.headers.get('cache-control'));
  if (response.status >= 500) {
    return 'server error';
  }
  if (response.headers.has('set-cookie')) {
    return 'sets a cookie';
  }
  if (response.redirected) {
    return 'redirected';
  }
  if (/(^|,)\s*\*\s*(,|$)/.test(response.headers.get('vary') ?? '')) {
    return 'Vary: *';
  }
  if (credentialed(request) && !directives.has('public') && !directives.has('s-maxage')) {
    return 'credentials without public or s-maxage';
  }
  if (!semantics.storable()) {
    return 'not storable by a shared cache (RFC 9111)';
  }
  return undefined;
}

/**
 * What a response tells of the page built from it: `private` when no shared cache may keep it
 * (private, no-store, or credentials without public), and how long it is fresh when it says so
 * (max-age, s-maxage, Expires, no-cache: 0); undefined when it says nothing of its lifetime (the
 * page's own route decides then).
 */
export function dataFreshness(
  request: Request,
  headers: Headers | Record<string, string>,
  semantics: CachePolicy,
): { private: boolean; freshMs: number | undefined } {
  const get = (name: string) =>
    headers instanceof Headers ? headers.get(name) : (headers[name] ?? null);
  const directives = cacheControlDirectives(get('cache-control'));
  const isPrivate =
    directives.has('private') ||
    directives.has('no-store') ||
    (credentialed(request) && !directives.has('public') && !directives.has('s-maxage'));
  const explicit =
    directives.has('max-age') ||
    directives.has('s-maxage') ||
    directives.has('no-cache') ||
    get('expires') !== null;
  return {
    private: isPrivate,
    freshMs: explicit ? Math.max(0, semantics.maxAge() - semantics.age()) * 1000 : undefined,
  };
}

/** The stale windows a response allows (RFC 5861), none past must-revalidate or no-cache. */
function staleWindows(directives: Map<string, string | true>): {
  staleWhileRevalidateMs: number;
  staleIfErrorMs: number;
} {
  const mayServeStale =
    !directives.has('must-revalidate') &&
    !directives.has('proxy-revalidate') &&
    !directives.has('no-cache');
  return {
    staleWhileRevalidateMs: mayServeStale
      ? (directiveSeconds(directives, 'stale-while-revalidate') ?? 0) * 1000
      : 0,
    staleIfErrorMs: mayServeStale
      ? (directiveSeconds(directives, 'stale-if-error') ?? 0) * 1000
      : 0,
  };
}

/**
 * The entry for a stored response: its freshness as the cache core counts it (from now: what is
 * left of its max-age after its Age), its stale windows, and how long it is kept to be revalidated.
 */
export function entryOf(
  response: { status: number; statusText: string; headers: Record<string, string> },
  body: Buffer,
  semantics: CachePolicy,
  groups: readonly string[],
): CachedData {
  const directives = cacheControlDirectives(response.headers['cache-control']);
  const windows = staleWindows(directives);
  const freshMs = Math.max(0, semantics.maxAge() - semantics.age()) * 1000;
  const validated = 'etag' in response.headers || 'last-modified' in response.headers;
  const policy: SharedCachePolicy = {
    freshMs,
    ...windows,
    revalidatableMs: validated ? REVALIDATABLE_MS : 0,
  };
  return {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    body,
    semantics: semantics.toObject(),
    policy,
    groups,
    storedAt: 0,
    refreshFailed: false,
  };
}

/**
 * The groups of a response: the app's for the request (its `Cache-Groups` request header, as it
 * names them) and the API's (its Cache-Tag, Surrogate-Key or Cache-Groups), prefixed apart
 * (API_GROUP_PREFIX); at most MAX_GROUPS in all, each a valid group name.
 */
export function groupsOf(appGroups: readonly string[], response: Record<string, string>): string[] {
  // Cache-Groups' members are sf-strings, spaces and all (RFC 9875); the CDN lists are split on
  // their separators and trimmed.
  const listed = [
    ...(response['cache-tag'] ?? '').split(','),
    ...(response['surrogate-key'] ?? '').split(' '),
  ].map((tag) => tag.trim());
  const api = [...(parseCacheGroups(response['cache-groups'] ?? '') ?? []), ...listed]
    .filter((tag) => tag !== '')
    .map((tag) => `${API_GROUP_PREFIX}${tag}`);
  return [...new Set([...appGroups, ...api])].filter(isGroupName).slice(0, MAX_GROUPS);
}
