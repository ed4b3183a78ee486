// No render that saw a visitor leaves shareable, whatever the spelling of the URL (docs/render-
// cache-and-cdn.md "What a bypass sends downstream"). Generated spellings of the tests' app's routes
// (matrix parameters, percent-encoding, empty segments, trailing slashes, case, dot segments,
// queries, outlets) × generated cookies and headers holding canaries, for the engine and build of
// this run (scripts/each-engine.mjs; npm run test:localized runs it on a localized build), with the
// render cache on and off. test/app's `naive/:id` is shared and reads the request the naive way
// (the raw cookie header, undeclared headers, every header); `naive-private/:id` is private;
// `naive-default/:id` declares no policy. Each answer must:
// - hold no visitor's canary unless no shared cache may keep it (`private` or `no-store`);
// - carry the policy of the route Angular's router rendered (the page names it);
// - or be a 308 to the one spelling the router reads the same (Angular's own URL parser is the
//   oracle), or a 400 from the guard.
// The same through a real Varnish: test/deploy/varnish.test.mjs.
import '@angular/compiler';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DefaultUrlSerializer } from '@angular/router';
import fc from 'fast-check';
import { at, ENGINE, LOCALIZED, request, SAYS, startOrigin } from '../helpers/origin.mjs';
import { canariesOf, headersOf, spellingOf, visitor } from '../helpers/visitors.mjs';

const HOST = 'localhost:4000';

/** The policy each route declares (test/app/src/app/app.routes.server.ts), as it reaches a client. */
const SHARED = 's-maxage=60, stale-while-revalidate=600';
const POLICY = {
  'naive/:id': { status: 200, cacheControl: SHARED, vary: /^Cookie\b/ },
  'naive-private/:id': { status: 200, cacheControl: 'private, no-store' },
  'naive-default/:id': { status: 200, cacheControl: 'private, no-cache' },
  'seen/:id': { status: 200, cacheControl: SHARED, vary: /^Cookie, x-ab-bucket\b/ },
  'private-seen': { status: 200, cacheControl: 'private, no-store' },
  'products/:id': {
    status: 200,
    cacheControl: `${SHARED}, stale-if-error=86400`,
  },
  // The not-found page's route (`**`) declares no policy: rendered from the visitor's request.
  '**': { status: 404, cacheControl: 'private, no-cache' },
  // A page that throws: CommonEngine renders around the error, Angular's engine answers no page
  // (the origin's own 500 page). A render that reported an error is kept by no cache.
  throws: { status: ENGINE === 'app' ? 500 : 200, cacheControl: 'no-store' },
  'no-locale': { status: 404, cacheControl: undefined },
  // The prerendered home page and the client-only shell hold nothing of any request.
  prerendered: { status: 200, cacheControl: 'no-cache' },
  'client-only': { status: 200, cacheControl: 'no-cache' },
  'root-rendered': { status: 200, cacheControl: 'private, no-cache' },
};

/** The canonical paths the spellings are made from, inside the site under test. */
const PATHS = [
  '/naive/5',
  '/naive-private/5',
  '/naive-default/5',
  '/seen/3',
  '/private-seen',
  '/products/7',
  '/nope/x',
  '/throws-shared',
  '/dashboard',
  '/',
];

/** The route whose page an answer is, read from the page (test/app names it where it can). */
function renderedRoute(res, path) {
  const named = /<p class="route">([^<]*)<\/p>/.exec(res.text)?.[1];
  if (named !== undefined) return named;
  // A localized build's path under no locale (`/Fr/…`, `/fr;x=1`): a plain 404, nothing rendered.
  if (res.text === 'Not Found') return 'no-locale';
  // The page that throws renders nothing of its own (its title neither, in a localized build).
  if (res.status === 500 || (path.endsWith('throws-shared') && !/<h1>/.test(res.text))) {
    return 'throws';
  }
  if (res.text.includes(SAYS.notFound)) return '**';
  if (res.text.includes('class="product"')) return 'products/:id';
  if (res.text.includes('ng-server-context="ssg"')) return 'prerendered';
  // A path the router refuses to parse: it renders the root instead, from the visitor's request.
  if (res.text.includes(SAYS.welcome)) return 'root-rendered';
  if (/<app-root><\/app-root>/.test(res.text)) return 'client-only';
  return undefined;
}

/** Generated spellings of every path, under the site's prefix (a locale's, in a localized run). */
const target = fc.constantFrom(...PATHS).chain((path) => {
  const prefixed = at(path === '/' ? '' : path) || '/';
  return spellingOf(prefixed).map((spelling) => ({ path: prefixed, spelling }));
});

/** What Angular's router reads of a URL: each primary segment's path and matrix parameters, the query. */
const serializer = new DefaultUrlSerializer();
function routerReads(url) {
  try {
    const tree = serializer.parse(url);
    // A trailing slash is an empty last segment the router's matching passes over.
    const segments = (tree.root.children['primary']?.segments ?? []).filter(
      (s) => s.path !== '' || Object.keys(s.parameters).length > 0,
    );
    return JSON.stringify({
      segments: segments.map((s) => [s.path, s.parameters]),
      outlets: Object.keys(tree.root.children).sort(),
      query: tree.queryParams,
    });
  } catch {
    return 'unparsed';
  }
}

/** The server route (test/app's app.routes.server.ts) whose pattern the router's segments match first. */
const SERVER_ROUTES = [
  ['products', ':id'],
  ['seen', ':id'],
  ['naive', ':id'],
  ['naive-private', ':id'],
  ['naive-default', ':id'],
];
function serverRouteOf(spelling) {
  let segments;
  try {
    const tree = serializer.parse(spelling);
    segments = (tree.root.children['primary']?.segments ?? []).map((s) => s.path).filter(Boolean);
  } catch {
    return undefined;
  }
  if (LOCALIZED) segments = segments.slice(1);
  const match = SERVER_ROUTES.find(
    (pattern) =>
      pattern.length === segments.length &&
      pattern.every((part, i) => part.startsWith(':') || part === segments[i]),
  );
  return match?.join('/');
}

/** Whether a shared cache may keep an answer (RFC 9111 §3; RFC 9213 never contradicts a private one). */
function shareable(headers) {
  const cc = (headers['cache-control'] ?? '').toLowerCase();
  return !/(^|,)\s*(private|no-store)\s*(,|$)/.test(cc);
}

/** Checks one answer to one visitor's request for `target`. */
function assertAnswer(t, v, res) {
  const { spelling } = t;
  const where = `${spelling} → ${res.status} ${res.headers['cache-control']} ${res.headers.location ?? ''}`;
  const seen = res.text + JSON.stringify(res.headers);
  const held = canariesOf(v).filter((c) => seen.includes(c));
  if (held.length > 0) {
    assert.ok(!shareable(res.headers), `${where}: holds ${held} and a shared cache may keep it`);
    assert.equal(res.headers['cdn-cache-control'] ?? 'no-store', 'no-store', where);
    assert.equal(res.headers['surrogate-control'], undefined, where);
  }
  if (res.status === 308) {
    const location = res.headers.location;
    assert.match(location, /^\/(?![/\\])/, `${where}: a Location of another origin`);
    assert.equal(res.headers['cache-control'], 'public, max-age=3600', where);
    // The router reads the one spelling as it reads the spelling asked for, empty segments
    // aside (the origin drops them where the router would stop reading: docs/render-cache-and-cdn.md).
    // A spelling the router refuses (`/;`) would fail its navigation whatever it is sent to.
    const collapsed = spelling.replace(/\/{2,}/g, '/');
    if (routerReads(collapsed) !== 'unparsed') {
      assert.equal(routerReads(location), routerReads(collapsed), where);
    }
    return;
  }
  if (res.status === 400) {
    assert.match(res.text, /^Bad Request: /, where);
    return;
  }
  // Angular's engine answers a navigation that ended at another URL with a redirect of its own
  // (the router's redirects; an outlet it dropped), with no page.
  if (res.headers.location !== undefined) {
    assert.equal(res.text, '', where);
    assert.match(res.headers.location, /^\/(?![/\\])/, where);
    return;
  }
  // An outlet no route names fails the navigation: Angular's engine answers no page (a 500),
  // CommonEngine renders around it with an error reported. Either way no cache may keep it.
  if (/[()]/.test(spelling) && res.headers['cache-control'] === 'no-store') {
    assert.ok(res.status === 500 || res.status === 404 || res.status === 200, where);
    return;
  }
  const route = renderedRoute(res, t.path);
  assert.ok(
    route !== undefined && POLICY[route],
    `${where}: which page is this?\n${res.text.slice(0, 400)}`,
  );
  let expected = POLICY[route];
  if (route === '**' && serverRouteOf(spelling) === 'products/:id') {
    // A product route whose id names no product: the not-found page under the product route's
    // policy, as Angular's engine applies it too. Made from the URL alone: shareable.
    expected = { status: 404, cacheControl: POLICY['products/:id'].cacheControl };
  }
  if (routerReads(spelling) === 'unparsed') {
    // The router renders the root for a path it refuses (`/a/;b`), while Angular's engine reads
    // the path its own way for the headers it applies: only what the render saw decides how far
    // the answer may be shared, checked above.
    return;
  }
  if (/[()]/.test(spelling)) {
    // With outlets, the router may render another route than the primary one the origin (and
    // Angular's engine) applies the policy of (a route without that outlet falls to `**`): only
    // what the render saw decides how far the answer may be shared, checked above.
    return;
  }
  assert.equal(res.status, expected.status, `${where}: rendered ${route}`);
  assert.equal(
    res.headers['cache-control'],
    expected.cacheControl,
    `${where}: the policy of ${route}`,
  );
  if (expected.vary) {
    assert.match(res.headers.vary ?? '', expected.vary, where);
  }
}

for (const cache of ['on', 'off']) {
  describe(`no render that saw a visitor leaves shareable (render cache ${cache}${LOCALIZED ? ', localized' : ''})`, () => {
    let origin;
    before(async () => {
      origin = await startOrigin({
        env: {
          NG_ALLOWED_HOSTS: 'localhost',
          ...(cache === 'off' ? { RENDER_CACHE_BYTES: '0' } : {}),
        },
      });
    });
    after(async () => {
      await origin?.stop();
    });

    it('property: every spelling of every route, every visitor: the route Angular renders, its policy, and no canary in what caches may keep', async () => {
      await fc.assert(
        fc.asyncProperty(target, visitor, visitor, async (t, first, second) => {
          const a = await request(origin.url, t.spelling, { headers: headersOf(first, HOST) });
          assertAnswer(t, first, a);
          // A second visitor asking for the same spelling never gets the first one's values.
          const b = await request(origin.url, t.spelling, { headers: headersOf(second, HOST) });
          assertAnswer(t, second, b);
          const leaked = canariesOf(first).filter((c) => b.text.includes(c));
          assert.deepEqual(leaked, [], `${t.spelling}: the second visitor got the first's values`);
        }),
        { numRuns: 200 },
      );
    });

    it('a shared page read naively sees its declared cookie alone: no greeting, on every path through the origin', async () => {
      const alice = { host: HOST, cookie: 'sid=alice; currency=USD', 'x-user': 'alice' };
      for (const path of ['/naive/41', '/naive/41?utm_source=newsletter', '/naive/41;tab=2']) {
        const res = await request(origin.url, at(path), { headers: alice });
        assert.equal(res.status, 200, path);
        assert.match(res.text, /Hello, stranger/, path);
        assert.doesNotMatch(res.text, /alice/, path);
        assert.match(res.text, /currency=USD/, `${path}: its declared cookie reaches it`);
        assert.equal(res.headers['cache-control'], SHARED, path);
      }
      // The private route greets its visitor, and says so to caches.
      const own = await request(origin.url, at('/naive-private/41'), { headers: alice });
      assert.match(own.text, /Welcome back, alice!/);
      assert.equal(own.headers['cache-control'], 'private, no-store');
    });
  });
}
