// Which app of the build the bench measures. A plain build is one app at the root. A localized one
// (angular.json's "localize") is one app per locale under its prefix, and the bench measures one:
// the locale whose prefix load-paths.json's pages are under (the source locale in an app started
// with --locales). Only that locale is loaded, so the peers serve it alone, from its own folders,
// while the origin and the stock server serve the whole build, as they do in production.
import { relative } from 'node:path';
import { LOAD_PATHS_FILE, readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { pathInSite, siteOf } from '../../server/locales/locale-sites.ts';

const shown = (path) => (path.startsWith(`${ROOT}/`) ? relative(ROOT, path) : path);

/**
 * @typedef {{ locale: string | undefined, prefix: string, browserDir: string, serverDir: string,
 *   locales: string[] }} MeasuredSite
 *   locale: undefined in a plain build; prefix: its pages' URL prefix without the trailing slash
 *   (`/en-US`), `` in a plain build; browserDir, serverDir: its app's folders; locales: every
 *   locale of the build (none in a plain one)
 */

/**
 * @param {string} dist a build's output folder
 * @param {import('../../scripts/lib/load-paths.mjs').LoadPaths} [paths]
 * @returns {Promise<MeasuredSite>}
 */
export async function measuredSite(dist, paths = readLoadPaths()) {
  const build = await readBuildDirs(dist);
  if (!build.localized) {
    const [{ browserDir, serverDir }] = build.locales;
    return { locale: undefined, prefix: '', browserDir, serverDir, locales: [] };
  }
  const site = siteOf(build.locales, paths.prerendered);
  const pages = [
    paths.prerendered,
    paths.rendered?.path,
    paths.data?.path,
    paths.personal?.private.path,
  ].filter((page) => page !== undefined);
  if (site === undefined || pages.some((page) => siteOf(build.locales, page) !== site)) {
    // The last page as the source locale's, whichever locale (or none) it is under now.
    const last = pages.at(-1);
    const under = siteOf(build.locales, last);
    const within = under === undefined ? last : pathInSite(under, last);
    const example = `${build.locales[0].prefix}${within === '/' ? '' : within}`;
    throw new Error(
      `${shown(LOAD_PATHS_FILE)} names pages (${pages.join(', ')}) that are not all under one ` +
        `locale of the localized build in ${shown(dist)} ` +
        `(${build.locales.map(({ prefix }) => prefix || '/').join(', ')}): the bench measures one locale, ` +
        `so name the pages of one, e.g. "${example}" (docs/your-app.md#serving-several-languages)`,
    );
  }
  const { locale, prefix, browserDir, serverDir } = site;
  return { locale, prefix, browserDir, serverDir, locales: build.locales.map((one) => one.locale) };
}

/**
 * A URL (a path, or absolute) as an app mounted at the site's prefix sees it: `/en-US/products/7`
 * is `/products/7`, `/en-US` is `/`. The locale's document keeps the prefix in its base href, so
 * its links still carry it; and CommonEngine finds the prerendered pages in the locale's own folder
 * by this path. A URL under no prefix (a plain build's) is left as it is.
 * @param {string} prefix @param {string} url
 */
export function urlInSite(prefix, url) {
  const pathStart = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (prefix === '' || pathStart < 0 || !url.startsWith(prefix, pathStart)) return url;
  const rest = url.slice(pathStart + prefix.length);
  if (rest !== '' && !/^[/?#]/.test(rest)) return url;
  return `${url.slice(0, pathStart)}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

/**
 * What the report says of a localized build's measurement; undefined for a plain build, which has
 * one app to measure.
 * @param {MeasuredSite} site
 */
export function describeSite(site) {
  if (site.locale === undefined) return undefined;
  return (
    `a localized build (${site.locales.join(', ')}): one locale measured, ${site.locale}, the one ` +
    `load-paths.json's pages are under (${site.prefix}/…); the origin and stock serve the whole build, ` +
    `every other variant serves ${site.locale} alone under ${site.prefix}, from its own folders ` +
    `(browser/${site.locale}/ and server/${site.locale}/, its own main.server.mjs and index.server.html)`
  );
}
