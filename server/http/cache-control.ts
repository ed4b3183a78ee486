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

/** What speaks to shared caches only, or contradicts `private` (a qualified `private="…"` too). */
const SHARED_ONLY: ReadonlySet<string> = new Set([
  'public',
  's-maxage',
  'proxy-revalidate',
  'private',
]);
