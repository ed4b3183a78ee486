// The app's build in dist/ (src/) as the browser tests address it: a plain build serves its pages
// and files at the root; a localized one under each locale's prefix (`/en-US/…`), its site root
// only a redirect and a path under no locale a 404 (docs/your-app.md, "Serving several
// languages"). The tests ask for the source locale's pages, read from the build itself, so they
// make the same requests on a plain build and follow the app when it is localized.
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { APP_DIST } from '../../scripts/lib/paths.mjs';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { siteOf } from '../../server/locales/locale-sites.ts';

const build = await readBuildDirs(APP_DIST);
const source = build.locales[0];

/** Whether `path` is under a locale's prefix already (as `ng new --locales` writes load-paths.json). */
const underALocale = (path) => siteOf(build.locales, path.split('?', 1)[0]) !== undefined;

export const site = {
  localized: build.localized,
  /** The source locale (`en-US`), undefined on a plain build. */
  locale: source.locale,
  /** The source locale's prefix (`/en-US`), `` on a plain build. */
  prefix: source.prefix,
  /** Where its files are: dist/browser/ on a plain build, dist/browser/en-US/ on a localized one. */
  browserDir: source.browserDir,
  serverDir: source.serverDir,
  /**
   * The address of the app's page `path` (`/products/7`, `/`): `/en-US/products/7` and `/en-US`
   * on a localized build (its root is the prefix, where the site root redirects and as
   * load-paths.json writes it); `path` on a plain one, or when it names a locale already.
   * @param {string} path
   */
  page: (path) =>
    !build.localized || underALocale(path)
      ? path
      : path === '/'
        ? source.prefix
        : `${source.prefix}${path}`,
  /**
   * The address of a file of the build (`favicon.ico`, `chunk-….js`): where the page's base href
   * puts it, `/en-US/favicon.ico` on a localized build.
   * @param {string} name
   */
  file: (name) => `${source.prefix}/${name}`,
};

/**
 * load-paths.json's pages on this build: as written when they name a locale, else the source
 * locale's (so the template's unprefixed file also runs on a localized build of the demo).
 * @returns {import('../../scripts/lib/load-paths.mjs').LoadPaths}
 */
export function siteLoadPaths(paths = readLoadPaths()) {
  const { rendered } = paths;
  return {
    prerendered: site.page(paths.prerendered),
    clientOnly: paths.clientOnly && site.page(paths.clientOnly),
    notFound: site.page(paths.notFound),
    rendered: rendered && {
      ...rendered,
      path: site.page(rendered.path),
      at: (k) => site.page(rendered.at(k)),
    },
  };
}
