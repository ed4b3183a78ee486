// A localized build (Angular i18n: en-US the source locale, fr and de; dist-test-i18n/, from the
// tests' app with `--configuration localized`), served by the origin for the engine of this run
// (scripts/each-engine.mjs runs both) beside Angular's own server on the same build, in this
// process (test/helpers/angular-engine.mjs): every locale's pages, the site root's redirect, the
// right locale in every render under concurrency, a render cache and revalidation per locale, and
// hostile Accept-Language and locale cookies.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { TEST_APP_I18N_DIST as DIST } from '../../scripts/lib/paths.mjs';
import { buildStaticIndex, readPrerenderedRoutes } from '../../server/files/static-index.ts';
import { angularServer } from '../helpers/angular-engine.mjs';
import { health, request, runOriginExpectingExit, startOrigin } from '../helpers/origin.mjs';
import { TEST_APP_DIST } from '../../scripts/lib/paths.mjs';

const LOCALES = ['en-US', 'fr', 'de'];
const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
/** The app's own words for its home page title, per locale (test/app/src/locale/). */
const WELCOME = { 'en-US': 'Welcome', fr: 'Bienvenue', de: 'Willkommen' };

/** What a page says of itself: its language, its title, its note and its formatted number. */
function facts(text) {
  const first = (pattern) => pattern.exec(text)?.[1];
  return {
    lang: first(/<html[^>]*\slang="([^"]*)"/),
    h1: first(/<h1[^>]*>([^<]*)</),
    note: first(/class="note"[^>]*>([^<]*)</),
    locale: first(/class="locale"[^>]*>([^<]*)</),
  };
}

/** The `hreflang` alternates of a `Link` header, by language. */
function alternates(link = '') {
  return Object.fromEntries(
    [...link.matchAll(/<([^>]*)>; rel="alternate"; hreflang="([^"]*)"/g)].map(([, href, lang]) => [
      lang,
      href,
    ]),
  );
}

const angular = await angularServer(DIST);

describe('a localized build', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ dist: DIST, env: { REVALIDATE_TOKEN: TOKEN } });
  });
  after(async () => {
    await origin?.stop();
  });

  for (const locale of LOCALES) {
    it(`answers ${locale}'s pages as Angular's server does, in ${locale}`, async () => {
      for (const path of ['', '/products/7', '/seen/3', '/dashboard', '/no-such-page']) {
        const url = `/${locale}${path}`;
        const ours = await request(origin.url, url);
        const theirs = await angular(url);
        assert.equal(ours.status, theirs.status, url);
        assert.equal(ours.headers['content-language'], locale, url);
        assert.equal(theirs.headers.get('content-language'), locale, url);
        assert.deepEqual(facts(ours.text), facts(theirs.text), url);
        assert.equal(facts(ours.text).lang, locale, url);
        if (ours.status === 200) {
          assert.deepEqual(
            alternates(ours.headers.link),
            {
              'en-US': `/en-US${path}`,
              fr: `/fr${path}`,
              de: `/de${path}`,
              'x-default': '/',
            },
            url,
          );
        }
      }
      const home = facts((await request(origin.url, `/${locale}`)).text);
      assert.equal(home.h1, WELCOME[locale]);
      const seen = facts((await request(origin.url, `/${locale}/seen/3`)).text);
      assert.match(seen.locale, new RegExp(`^${locale} 1.234[.,]5$`, 'u'));
    });
  }

  it('serves each prerendered page and file from its locale’s folder, hashed files immutable', async () => {
    for (const locale of LOCALES) {
      const folder = join(DIST, 'browser', locale);
      const page = await request(origin.url, `/${locale}`);
      assert.equal(page.status, 200);
      assert.match(page.headers.etag, /^"/, 'a strong validator');
      assert.ok(page.body.equals(readFileSync(join(folder, 'index.html'))));
      // The app links to its home as its base href, `/fr/`: the same prerendered page, as
      // Angular's server answers it, never a render per click.
      const linked = await request(origin.url, `/${locale}/`);
      assert.ok(linked.body.equals(page.body), `/${locale}/ is the prerendered page`);
      const theirs = await angular(`/${locale}/`);
      assert.match(theirs.text, /ng-server-context="ssg"/);
      assert.equal(page.headers['content-language'], locale);
      assert.equal(alternates(page.headers.link).fr, '/fr');
      const main = readdirSync(folder).find((name) => /^main-[\w-]+\.js$/.test(name));
      const script = await request(origin.url, `/${locale}/${main}`);
      assert.equal(script.status, 200);
      assert.equal(script.headers['cache-control'], 'max-age=31536000, immutable');
      assert.ok(script.body.equals(readFileSync(join(folder, main))));
      const icon = await request(origin.url, `/${locale}/favicon.ico`);
      assert.equal(icon.headers['cache-control'], 'no-cache', 'a file that keeps its name');
    }
  });

  it('answers a path under no locale as Angular’s server does: 404', async () => {
    for (const path of ['/products/7', '/es/products/7', '/french', '/frx', '/en', '/dashboard']) {
      const ours = await request(origin.url, path);
      assert.equal(ours.status, (await angular(path)).status, path);
      assert.equal(ours.status, 404, path);
    }
  });

  it('renders every page in its own locale when locales render at once', async () => {
    const asks = Array.from({ length: 48 }, (_, i) => ({
      locale: LOCALES[i % 3],
      // Each its own render: a page nobody asked for yet, or one rendered per request.
      path: i % 2 === 0 ? `/seen/${1000 + i}` : '/private-seen',
    }));
    const pages = await Promise.all(
      asks.map(({ locale, path }) => request(origin.url, `/${locale}${path}`)),
    );
    pages.forEach((page, i) => {
      const { locale } = asks[i];
      assert.equal(page.status, 200);
      assert.equal(facts(page.text).lang, locale);
      assert.ok(facts(page.text).locale.startsWith(`${locale} `), facts(page.text).locale);
    });
  });

  it('keeps one cached page per locale, and revalidates one by its path, all by their group', async () => {
    const paths = LOCALES.map((locale) => `/${locale}/products/11`);
    for (const path of paths) {
      await request(origin.url, path);
      const hit = await request(origin.url, path);
      assert.match(hit.headers['cache-status'], /^render-cache; hit/, path);
      assert.equal(facts(hit.text).lang, path.split('/')[1]);
    }
    const revalidate = async (body) => {
      const res = await request(origin.url, '/_origin/revalidate', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'hard', ...body }),
      });
      assert.equal(res.status, 200, res.text);
      return JSON.parse(res.text).affected;
    };
    assert.equal(await revalidate({ paths: ['/fr/products/11'] }), 1);
    assert.doesNotMatch((await request(origin.url, paths[1])).headers['cache-status'], /hit/);
    assert.match((await request(origin.url, paths[2])).headers['cache-status'], /hit/);
    assert.equal(await revalidate({ groups: ['product-11'] }), 3);
  });

  it('redirects the site root as Angular’s server does, for a table of Accept-Language', async () => {
    const table = [
      undefined,
      '',
      '*',
      'fr',
      'FR',
      'de-DE',
      'de-CH, fr;q=0.9',
      'fr-CH, de;q=0.5',
      'en',
      'en-GB,en;q=0.9',
      'es',
      'es, fr;q=0.1',
      'fr;q=0, de',
      'fr;q=0',
      'de;q=abc, fr;q=0.5',
      ',',
      ';;;',
      'x'.repeat(8000),
    ];
    for (const value of table) {
      const headers = value === undefined ? {} : { 'accept-language': value };
      const ours = await request(origin.url, '/', { headers });
      const theirs = await angular('/', headers);
      const label = JSON.stringify(value)?.slice(0, 40);
      assert.equal(ours.status, 302, label);
      assert.equal(ours.headers.location, theirs.headers.get('location'), label);
      assert.equal(ours.headers.vary, 'Accept-Language', label);
      assert.equal(ours.headers['cache-control'], 'no-cache', label);
    }
  });

  it('sends a visitor who refuses every locale to the source locale, where Angular’s server answers 404', async () => {
    const headers = { 'accept-language': 'en-US;q=0, fr;q=0, de;q=0' };
    assert.equal((await angular('/', headers)).status, 404);
    const ours = await request(origin.url, '/', { headers });
    assert.equal(ours.status, 302);
    assert.equal(ours.headers.location, '/en-US');
  });

  it('property: any Accept-Language gets Angular’s redirect, never a 5xx, never a cache entry', async () => {
    const entriesBefore = (await health(origin)).renderCache.entries;
    const tag = fc.oneof(
      fc.constantFrom('fr', 'de', 'en-US', 'en', 'de-AT', 'FR-fr', '*', ''),
      fc.stringMatching(/^[a-zA-Z-]{0,12}$/),
    );
    const part = fc
      .tuple(tag, fc.option(fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }), fc.string())))
      .map(([name, q]) => (q === null ? name : `${name};q=${q}`));
    const header = fc.oneof(
      fc.array(part, { maxLength: 8 }).map((parts) => parts.join(', ')),
      fc.stringMatching(/^[\x20-\x7e]{0,200}$/),
    );
    await fc.assert(
      fc.asyncProperty(header, async (value) => {
        const headers = { 'accept-language': value };
        const ours = await request(origin.url, '/', { headers });
        const theirs = await angular('/', headers);
        assert.equal(ours.status, 302);
        assert.equal(
          ours.headers.location,
          theirs.status === 302 ? theirs.headers.get('location') : '/en-US',
        );
      }),
      { numRuns: 150 },
    );
    assert.equal((await health(origin)).renderCache.entries, entriesBefore);
  });
});

describe('a localized build whose visitors choose their locale in a cookie (LOCALE_COOKIE)', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ dist: DIST, env: { LOCALE_COOKIE: 'lang' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('follows the cookie, then Accept-Language, and says it varies on both', async () => {
    const cases = [
      [{ cookie: 'lang=de', 'accept-language': 'fr' }, '/de'],
      [{ cookie: 'theme=dark; lang=fr; lang=de' }, '/fr'],
      [{ cookie: 'lang=es', 'accept-language': 'fr' }, '/fr'],
      [{ cookie: 'lang=DE' }, '/en-US'],
      [{ cookie: `lang=${'d'.repeat(4000)}`, 'accept-language': 'de' }, '/de'],
      [{ cookie: 'lang' }, '/en-US'],
    ];
    for (const [headers, location] of cases) {
      const res = await request(origin.url, '/', { headers });
      assert.equal(res.status, 302, JSON.stringify(headers).slice(0, 60));
      assert.equal(res.headers.location, location, JSON.stringify(headers).slice(0, 60));
      assert.equal(res.headers.vary, 'Accept-Language, Cookie');
    }
  });
});

describe('the static index of a localized build', () => {
  it('holds the bytes the locales share once', () => {
    const index = buildStaticIndex(
      join(DIST, 'browser'),
      readPrerenderedRoutes(join(DIST, 'prerendered-routes.json')),
      {
        locales: {
          sites: LOCALES.map((locale) => ({ locale, prefix: `/${locale}` })),
          basePath: '/',
        },
      },
    );
    const css = readdirSync(join(DIST, 'browser/fr')).find((name) => name.endsWith('.css'));
    const [en, fr, de] = LOCALES.map((locale) => index.get(`/${locale}/${css}`));
    assert.ok(en.body === fr.body && fr.body === de.body, 'one buffer for the same stylesheet');
    const [enHome, frHome] = ['en-US', 'fr'].map((locale) => index.get(`/${locale}`));
    assert.notEqual(enHome.body, frHome.body, 'each locale its own page');
  });
});

describe('LOCALES: the locales this process serves, one deployment per locale', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ dist: DIST, env: { LOCALES: 'fr' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('serves its locale’s pages and files, naming every locale as their alternates', async () => {
    assert.deepEqual((await health(origin)).locales, ['fr']);
    for (const path of ['/fr', '/fr/', '/fr/products/7', '/fr/dashboard', '/fr/favicon.ico']) {
      const res = await request(origin.url, path);
      assert.equal(res.status, 200, path);
    }
    const page = await request(origin.url, '/fr/products/7');
    assert.equal(facts(page.text).note, 'Les prix incluent la TVA.');
    assert.deepEqual(Object.keys(alternates(page.headers.link)), [
      'en-US',
      'fr',
      'de',
      'x-default',
    ]);
    assert.equal((await request(origin.url, '/fr/nope')).status, 404);
  });

  it('answers another locale’s pages and files 404, and sends a visitor to it from the site root', async () => {
    const rendered = (await health(origin)).renders.started;
    const folder = join(DIST, 'browser', 'de');
    const main = readdirSync(folder).find((name) => /^main-[\w-]+\.js$/.test(name));
    for (const path of ['/de', '/de/', '/de/products/7', '/de/favicon.ico', `/de/${main}`]) {
      const res = await request(origin.url, path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.headers['content-type'] ?? '', /html/, `${path}: rendered nothing`);
    }
    const root = await request(origin.url, '/', { headers: { 'accept-language': 'de-AT' } });
    assert.equal(root.status, 302);
    assert.equal(root.headers.location, '/de', 'the deployment that serves de answers it');
    assert.equal((await health(origin)).renders.started, rendered, 'no render for another locale');
  });

  it('stops with one line naming LOCALES for a locale the build has not, or a build without locales', async () => {
    const unknown = await runOriginExpectingExit({ LOCALES: 'fr,es' }, 15_000, DIST);
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.stderr.trim(),
      'Cannot start: LOCALES names es, which the build has not: its locales are en-US, fr, de',
    );
    const plain = await runOriginExpectingExit({ LOCALES: 'fr' }, 15_000, TEST_APP_DIST);
    assert.equal(plain.code, 1);
    assert.match(
      plain.stderr.trim(),
      /^Cannot start: LOCALES is set, but the build has no locales/,
    );
    const malformed = await runOriginExpectingExit({ LOCALES: 'fr,,de' }, 15_000, DIST);
    assert.match(malformed.stderr.trim(), /^Cannot start: LOCALES must be a comma-separated list/);
  });
});
