// The pages step of a localized build: each locale's pages answer the paths under its prefix, the
// site root redirects a visitor to their locale, and any other path is no locale's: 404, as
// Angular's own server answers it.
import type { IncomingHttpHeaders } from 'node:http';
import { OriginError } from '../errors.ts';
import { answer, type Answer, respond } from '../http/answer.ts';
import { type LocaleSite, siteOf } from '../locales/locale-sites.ts';
import { preferredLocale } from '../locales/preferred-locale.ts';
import { normalize, type RenderInputs } from '../request/render-inputs.ts';
import type { Pages } from './pages.ts';

export interface LocalizedPagesOptions {
  /** Every locale served here with its pages, the source locale first when served. */
  sites: readonly (LocaleSite & { pages: Pages })[];
  /**
   * Every locale of the build, the source locale first: where the site root sends a visitor,
   * also to a locale another process serves (LOCALES, one deployment per locale).
   */
  every: readonly LocaleSite[];
  /** The path that redirects to a locale (`/`). */
  basePath: string;
  /** A cookie holding the visitor's chosen locale (LOCALE_COOKIE); undefined: none. */
  cookie: string | undefined;
}

const EMPTY = Buffer.alloc(0);
const NOT_FOUND = answer(
  404,
  ['Content-Type', 'text/plain; charset=utf-8'],
  Buffer.from('Not Found'),
);

export function localizedPages({ sites, every, basePath, cookie }: LocalizedPagesOptions): Pages {
  const locales = every.map(({ locale }) => locale);
  // The cookie is read as a declared input is (request/render-inputs.ts): a closed set, the
  // build's locales; any other value, however long or odd, counts as no cookie.
  const chosen: RenderInputs | undefined =
    cookie === undefined
      ? undefined
      : {
          inputs: [{ kind: 'cookie', name: cookie, values: new Set(locales), default: '' }],
          vary: 'Cookie',
          undeclaredReads: 'warn',
        };
  // Computed per request, never stored by the origin: a CDN may keep one per Accept-Language (and
  // Cookie) only if it revalidates it, which costs it one cheap request to the origin.
  const vary = chosen === undefined ? 'Accept-Language' : 'Accept-Language, Cookie';
  const redirects = new Map<string, Answer>(
    every.map(({ locale, prefix }) => [
      locale,
      answer(302, ['Location', prefix, 'Vary', vary, 'Cache-Control', 'no-cache'], EMPTY, {
        compress: false,
      }),
    ]),
  );
  const localeFor = (headers: IncomingHttpHeaders): string => {
    const fromCookie = chosen && normalize(chosen, headers)[0];
    if (fromCookie) {
      return fromCookie;
    }
    const header = headers['accept-language'];
    return preferredLocale(typeof header === 'string' ? header : undefined, locales);
  };
  const rootOf = basePath.length > 1 ? basePath.replace(/\/$/, '') : basePath;
  return {
    step: async (ctx, next) => {
      const site = siteOf(sites, ctx.path);
      if (site !== undefined) {
        await site.pages.step(ctx, next);
      } else if (ctx.path === basePath || ctx.path === rootOf) {
        respond(ctx, redirects.get(localeFor(ctx.headers))!);
      } else {
        respond(ctx, NOT_FOUND);
      }
    },
    fresh: (origin, path, headers, res) =>
      siteOf(sites, path)?.pages.fresh(origin, path, headers, res),
    part: async (ctx, index, path) => {
      const site = siteOf(sites, path);
      if (site === undefined) {
        throw new OriginError('ORIGIN_PART_NOT_FOUND');
      }
      await site.pages.part(ctx, index, path);
    },
    routeOf: (path) => {
      const site = siteOf(sites, path);
      const page = site?.pages.routeOf(path);
      return page && { ...page, locale: site!.locale };
    },
  };
}
