// A localized build's hints: each locale's own, read from its manifests.
import { siteOf } from '../locales/locale-sites.ts';
import { NO_HINTS, type PageHints } from './page-hints.ts';

/** Each locale's page hints (read from its own manifests), for the paths under its prefix. */
export function hintsByLocale(sites: readonly { prefix: string; hints: PageHints }[]): PageHints {
  const of = (path: string): PageHints => siteOf(sites, path)?.hints ?? NO_HINTS;
  return {
    links: (path) => of(path).links(path),
    header: (path) => of(path).header(path),
    routeChunks: (path) => of(path).routeChunks(path),
  };
}
