// Where each locale of a localized build lives in the URL space, and what its answers tell browsers
// and crawlers about it: the locale a path belongs to, the path within that locale's app, and the
// `Content-Language` and `hreflang` alternates of its pages.

/** One locale's place in the URL space. */
export interface LocaleSite {
  /** The locale (`fr`), as the build names it. */
  locale: string;
  /** Its pages' prefix without the trailing slash (`/fr`). */
  prefix: string;
}

/** The locales of a build and where the site root is. */
export interface LocaleMap {
  sites: readonly LocaleSite[];
  /** The path the site root redirects from (`/`). */
  basePath: string;
}

/**
 * The site whose prefix `path` starts with (`/fr`, `/fr/…`), the longest such prefix (a locale at
 * the base path itself, `subPath: ''`, is under every other's), else undefined: no locale's path.
 */
export function siteOf<T extends { prefix: string }>(
  sites: readonly T[],
  path: string,
): T | undefined {
  let found: T | undefined;
  for (const site of sites) {
    if (
      path.startsWith(site.prefix) &&
      (path.length === site.prefix.length || path[site.prefix.length] === '/') &&
      (found === undefined || site.prefix.length > found.prefix.length)
    ) {
      found = site;
    }
  }
  return found;
}

/** `path` within its locale's app: `/fr/products/7` is `/products/7`, `/fr` is `/`. */
export function pathInSite(site: { prefix: string }, path: string): string {
  return path.slice(site.prefix.length) || '/';
}

/** What a page says of its language: `Content-Language`, and the `Link` value of its alternates. */
export interface PageLanguage {
  language: string;
  alternates: string;
}

/**
 * Which language a page of `path` is in and where its other languages are: an `alternate` per
 * locale (`hreflang`) and the site root as `x-default`, as relative references (RFC 8288 §3.1:
 * resolved against the page's own URL); undefined for a path under no locale. `path` is as sent
 * (percent-encoded: no `<`, `>` or space), as URL's pathname gives it.
 */
export function pageLanguage(map: LocaleMap, path: string): PageLanguage | undefined {
  const site = siteOf(map.sites, path);
  if (site === undefined) {
    return undefined;
  }
  const within = pathInSite(site, path);
  const rest = within === '/' ? '' : within;
  const alternates = map.sites.map(
    ({ locale, prefix }) => `<${prefix}${rest}>; rel="alternate"; hreflang="${locale}"`,
  );
  alternates.push(`<${map.basePath}>; rel="alternate"; hreflang="x-default"`);
  return { language: site.locale, alternates: alternates.join(', ') };
}

/** The headers that say it: `Link` only for a page that is there (an error or a redirect has no alternates). */
export function languageHeaders(said: PageLanguage, status: number): string[] {
  return status >= 200 && status < 300
    ? ['Content-Language', said.language, 'Link', said.alternates]
    : ['Content-Language', said.language];
}
