// Hints before the page: a page request gets a 103 Early Hints naming its stylesheet, entry scripts
// and its route's lazy chunks (read from the build's manifests) before its page is looked up or
// rendered, over HTTP/2 (and over HTTP/1.1 with EARLY_HINTS=always, never to HTTP/1.0); its answer
// carries the same Link. Then the hints read from a build in process (hints/page-hints.ts), with
// generated paths. The tests' app (test/app) has no route chunks in its manifest: Angular leaves
// them out for a project whose root is not the workspace's. The demo's build has them, and
// test/browser/early-hints.test.mjs checks them there, with the modulepreload tags on both engines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { pageHints } from '../../server/hints/page-hints.ts';
import {
  ENGINE,
  LOCALIZED,
  at,
  rawRequest,
  request,
  siteDirs,
  startOrigin,
} from '../helpers/origin.mjs';

const site = siteDirs();
const manifest = (await import(pathToFileURL(join(site.server, 'angular-app-manifest.mjs')).href))
  .default;
/** A route as the manifest names it: under the locale's prefix in a localized build (`/fr` for `/`). */
const manifestRoute = (route) => (route === '/' ? at('') || '/' : at(route));
const chunksOf = (route) =>
  manifest.routes.find((entry) => entry.route === manifestRoute(route)).preload ?? [];
const shell = readFileSync(join(site.browser, 'index.csr.html'), 'utf8');
const mainJs = /<script src="(main-[\w-]+\.js)" type="module">/.exec(shell)[1];
const styles = /<link rel="stylesheet" href="(styles-[\w-]+\.css)"/.exec(shell)[1];

/** The files a Link value names, by their rel. */
const linked = (value) =>
  (value ?? '')
    .split(/,\s*(?=<)/)
    .filter(Boolean)
    .map((link) => `${/^<([^>]+)>/.exec(link)[1]} ${/rel="?([\w-]+)/.exec(link)[1]}`);
/** What a Link value hints (a localized page's Link also names its alternates: not hints). */
const hintsIn = (value) => linked(value).filter((link) => !link.endsWith(' alternate'));

describe(`hints before the page (${ENGINE} engine)`, () => {
  let origin;
  let plain;
  before(async () => {
    [origin, plain] = await Promise.all([startOrigin({ protocol: 'h2' }), startOrigin()]);
  });
  after(async () => {
    await Promise.all([origin?.stop(), plain?.stop()]);
  });

  it('sends a rendered page’s stylesheet, scripts and route chunks in a 103, then the same Link', async () => {
    const res = await request(origin.url, at('/products/31'));
    assert.equal(res.status, 200);
    assert.equal(res.interim.length, 1);
    assert.equal(res.interim[0].status, 103);
    const hinted = linked(res.interim[0].headers.link);
    assert.deepEqual(hinted.slice(0, 1), [`${at(`/${styles}`)} preload`]);
    assert.ok(hinted.includes(`${at(`/${mainJs}`)} modulepreload`), hinted.join('\n'));
    for (const chunk of chunksOf('/products/*')) {
      assert.ok(
        hinted.includes(`${at(`/${chunk}`)} modulepreload`),
        `${chunk} in\n${hinted.join('\n')}`,
      );
    }
    assert.deepEqual(hintsIn(res.headers.link), hinted, 'the answer repeats the hints');
    // From the render cache, before Koa: no 103 (nothing to wait for), the same Link.
    const cached = await request(origin.url, at('/products/31'));
    assert.match(cached.headers['cache-status'], /^render-cache; hit/);
    assert.deepEqual(hintsIn(cached.headers.link), hinted);
  });

  it('hints client-only and prerendered pages too, never files or HEAD', async () => {
    const client = await request(origin.url, at('/dashboard'));
    assert.equal(client.interim[0]?.status, 103);
    for (const chunk of chunksOf('/dashboard')) {
      assert.ok(linked(client.headers.link).includes(`${at(`/${chunk}`)} modulepreload`), chunk);
    }
    const prerendered = await request(origin.url, at('/'));
    assert.equal(prerendered.interim.length, 0, 'answered from memory at once');
    for (const chunk of chunksOf('/')) {
      assert.ok(
        linked(prerendered.headers.link).includes(`${at(`/${chunk}`)} modulepreload`),
        chunk,
      );
    }
    const file = await request(origin.url, at(`/${mainJs}`));
    assert.equal(file.interim.length, 0);
    assert.equal(file.headers.link, undefined);
    for (const path of ['/products/33', '/dashboard']) {
      const head = await request(origin.url, at(path), { method: 'HEAD' });
      assert.equal(head.interim.length, 0, `${path}: no 103 before a HEAD`);
      const get = await request(origin.url, at(path));
      assert.equal(head.headers.link, get.headers.link, `${path}: the Link its GET gets`);
    }
    const missing = await request(origin.url, at('/no-such.js'));
    assert.equal(missing.status, 404);
    assert.equal(missing.interim.length, 0);
  });

  it('sends no 103 over HTTP/1.1 unless told to (EARLY_HINTS=always), and the Link all the same', async () => {
    const overTls = await request(origin.url, at('/products/34'), { http1: true });
    const overPlain = await request(plain.url, at('/products/34'));
    for (const res of [overTls, overPlain]) {
      assert.equal(res.status, 200);
      assert.equal(res.interim.length, 0);
      assert.ok(linked(res.headers.link).includes(`${at(`/${mainJs}`)} modulepreload`));
    }
  });
});

describe('EARLY_HINTS', () => {
  it('always: HTTP/1.1 gets the 103 too, HTTP/1.0 never', async () => {
    const origin = await startOrigin({ env: { EARLY_HINTS: 'always' } });
    try {
      const res = await request(origin.url, at('/products/35'));
      assert.equal(res.interim[0]?.status, 103);
      const old = await rawRequest(
        origin.port,
        `GET ${at('/products/36')} HTTP/1.0\r\nHost: localhost\r\n\r\n`,
      );
      assert.equal(old.status, 200);
      assert.deepEqual(old.interim, []);
      assert.match(old.responses[0], /\r\nLink: </);
    } finally {
      await origin.stop();
    }
  });

  it('off: no 103 and no hints in Link', async () => {
    const origin = await startOrigin({ protocol: 'h2', env: { EARLY_HINTS: 'off' } });
    try {
      for (const path of ['/', '/products/37', '/dashboard']) {
        const res = await request(origin.url, at(path));
        assert.equal(res.interim.length, 0, path);
        assert.deepEqual(hintsIn(res.headers.link), [], path);
        // A plain build's pages have no other Link (a localized build's name their alternates).
        if (!LOCALIZED) assert.equal(res.headers.link, undefined, path);
      }
    } finally {
      await origin.stop();
    }
  });
});

describe('hints read from a build', () => {
  const html = `<!doctype html><html><head><base href="/shop/"><link rel="stylesheet" href="styles-AAAAAAAA.css">
    <link rel="modulepreload" href="chunk-SHARED01.js"><link rel="stylesheet" href="https://cdn.example/x.css">
    <script src="polyfills-PPPPPPPP.js" type="module"></script><script src="main-MMMMMMMM.js" type="module"></script>
    <script src="/absolute.js" type="module"></script><script>inline()</script></head><body></body></html>`;
  const routes = [
    { route: '/', preload: ['chunk-HOME0001.js'] },
    { route: '/products/*', preload: ['chunk-PRODUCT1.js', 'chunk-SHARED01.js'] },
    { route: '/products/new', preload: ['chunk-NEW00001.js'] },
    { route: '/docs/**', preload: ['chunk-DOCS0001.js'] },
    { route: '/**', preload: ['chunk-MISSING1.js'] },
  ];
  const hints = pageHints(html, routes);
  const entry = [
    '</shop/styles-AAAAAAAA.css>; rel=preload; as=style',
    '</shop/chunk-SHARED01.js>; rel=modulepreload',
    '</shop/polyfills-PPPPPPPP.js>; rel=modulepreload',
    '</shop/main-MMMMMMMM.js>; rel=modulepreload',
  ];

  it('reads the shell’s own files, in order, under its base href, and nothing from elsewhere', () => {
    assert.deepEqual(hints.links('/').slice(0, 4), entry);
    assert.equal(
      hints.header('/'),
      [...entry, '</shop/chunk-HOME0001.js>; rel=modulepreload'].join(', '),
    );
  });

  it('matches a route as Angular’s route tree does: a segment, then *, then **', () => {
    const chunks = (path) => hints.routeChunks(path);
    assert.deepEqual(chunks('/'), ['chunk-HOME0001.js']);
    assert.deepEqual(chunks('/products/7'), ['chunk-PRODUCT1.js', 'chunk-SHARED01.js']);
    assert.deepEqual(chunks('/products/new'), ['chunk-NEW00001.js']);
    assert.deepEqual(chunks('/docs/a/b/c'), ['chunk-DOCS0001.js']);
    assert.deepEqual(chunks('/products/7/reviews'), ['chunk-MISSING1.js']);
    assert.deepEqual(chunks('/anything'), ['chunk-MISSING1.js']);
    // A chunk the shell already preloads is not hinted twice.
    assert.equal(hints.links('/products/7').filter((link) => link.includes('SHARED01')).length, 1);
  });

  it('hints every generated path with the entry files at least, and never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (tail) => {
        const links = hints.links(`/${tail}`);
        assert.deepEqual(links.slice(0, 4), entry);
      }),
      { numRuns: 500 },
    );
  });

  it('gives no hints for a build without a shell or a manifest', () => {
    const none = pageHints('', []);
    assert.deepEqual(none.links('/x'), []);
    assert.equal(none.header('/x'), undefined);
    assert.deepEqual(pageHints(html, []).links('/products/1'), entry);
  });
});
