// Cache-Control of an answer no shared cache may keep: one made for one visitor (its render saw
// their request), one that sets a cookie, one from a render that failed.

/**
 * Fields that tell one kind of shared cache what to do in place of Cache-Control (RFC 9213's
 * CDN-Cache-Control, Akamai's and Fastly's Surrogate-Control): an answer no shared cache may keep
 * goes out without them, or a CDN that follows them would keep it anyway.
 */
export const TARGETED_CACHE_CONTROL: ReadonlySet<string> = new Set([
  'cdn-cache-control',
  'surrogate-control',
]);

/**
 * `cacheControl` for the browser alone (RFC 9111 §5.2.2.7): an answer that already says `private`
 * or `no-store` keeps its words; any other gets `private` first, and loses what only speaks to
 * shared caches (`public`, `s-maxage`, `proxy-revalidate`), keeping what the browser uses
 * (`max-age`, `no-cache`, `must-revalidate`, …). No Cache-Control at all is `private, no-cache`:
 * kept by the browser, revalidated before each use, as the origin's pages are by default.
 */
export function privateCacheControl(cacheControl: string | undefined): string {
  const directives = (cacheControl ?? '').match(DIRECTIVE) ?? [];
  const names = directives.map((directive) => directive.split('=')[0].trim().toLowerCase());
  if (names.includes('no-store') || directives.some((d) => d.trim().toLowerCase() === 'private')) {
    return cacheControl!;
  }
  const kept = directives
    .filter((_, i) => !SHARED_ONLY.has(names[i]))
    .map((directive) => directive.trim());
  return ['private', ...(kept.length === 0 ? ['no-cache'] : kept)].join(', ');
}

/** A directive: a name, and a token or quoted-string value (whose commas are not separators). */
const DIRECTIVE = /[^,"\s][^,"]*(?:"(?:[^"\\]|\\.)*"[^,"]*)*/g;

/**
 * The directives of a Cache-Control value by lower-case name, each its value (unquoted) or true;
 * a directive named twice keeps its first value. Tolerant: what does not parse is left out.
 */
export function cacheControlDirectives(
  cacheControl: string | null | undefined,
): Map<string, string | true> {
  const directives = new Map<string, string | true>();
  for (const directive of (cacheControl ?? '').match(DIRECTIVE) ?? []) {
    const equals = directive.indexOf('=');
    const name = (equals === -1 ? directive : directive.slice(0, equals)).trim().toLowerCase();
    if (name === '' || directives.has(name)) {
      continue;
    }
    const value =
      equals === -1
        ? true
        : directive
            .slice(equals + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
    directives.set(name, value);
  }
  return directives;
}

/** A directive's delta-seconds (RFC 9111 §1.2.2), or undefined when absent or not digits. */
export function directiveSeconds(
  directives: Map<string, string | true>,
  name: string,
): number | undefined {
  const value = directives.get(name);
  return typeof value === 'string' && /^\d+$/.test(value)
    ? Math.min(Number(value), 365 * 24 * 3600)
    : undefined;
}

/** What speaks to shared caches only, or contradicts `private` (a qualified `private="…"` too). */
const SHARED_ONLY: ReadonlySet<string> = new Set([
  'public',
  's-maxage',
  'proxy-revalidate',
  'private',
]);

/**
 * `cacheControl` with its lifetimes (`s-maxage`, `max-age`) no longer than `seconds`: a page is
 * never fresh for longer than the data it was made from. Other directives are kept as they are.
 */
export function cappedFreshness(cacheControl: string, seconds: number): string {
  return (cacheControl.match(DIRECTIVE) ?? [])
    .map((directive) => {
      const match = /^\s*(s-maxage|max-age)\s*=\s*"?(\d+)"?\s*$/i.exec(directive);
      return match && Number(match[2]) > seconds ? `${match[1]}=${seconds}` : directive.trim();
    })
    .join(', ');
}

/**
 * How stale an answer the request takes, by its `max-stale` (RFC 9111 §5.2.1.2): `max-stale=N`,
 * N seconds past freshness; a bare `max-stale`, any; undefined without it (the cache's own rules).
 * The shipped Varnish sends `max-stale=0` on its fetches: a stale page would be stored there as a
 * miss for two minutes (its built-in vcl_beresp_stale), so it waits for the refresh instead.
 */
export function maxStaleMs(cacheControl: string | string[] | undefined): number | undefined {
  if (cacheControl === undefined) {
    return undefined;
  }
  const directives = cacheControlDirectives(
    Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl,
  );
  const value = directives.get('max-stale');
  if (value === undefined) {
    return undefined;
  }
  const seconds = directiveSeconds(directives, 'max-stale');
  return value === true ? Infinity : seconds === undefined ? undefined : seconds * 1000;
}
