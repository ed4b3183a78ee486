// Chromium over HTTP/2 (TLS_CERT and TLS_KEY, a certificate made here): a page's 103 Early Hints is
// acted on — its entry script and its route's lazy chunks are fetched from the hints
// (initiatorType 'early-hints') while the page renders — and the page hydrates; under CSP=strict
// too, without a policy violation. Renders take 100 ms a step here (test/fixtures/think-time.mjs):
// a 103 helps only while the server thinks. And the app's own build: the hints name each route's
// chunks from the build's manifest, and on either engine the page carries them as modulepreload
// tags. The pages are the app's (load-paths.json: its page rendered per request), so these keep
// testing your app when the demo's pages go.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readPageHints } from '../../server/hints/page-hints.ts';
import { launchBrowser } from '../helpers/browser.mjs';
import {
  APP_DIST,
  ENGINE,
  ROOT,
  request,
  startOrigin,
  testCertificate,
} from '../helpers/origin.mjs';
import { site, siteLoadPaths } from '../helpers/site.mjs';

/**
 * The lazy chunks of the route a page path matches, as the build's manifest names them (the source
 * locale's on a localized build: the pages tested are its pages).
 */
const hints = await readPageHints(site.browserDir, site.serverDir);
const chunksOf = (path) => hints.routeChunks(path);

/** The app's page rendered per request (load-paths.json), if it answers 200 from a lazy route. */
const { rendered } = siteLoadPaths();
const SKIP =
  rendered === undefined || rendered.status !== 200
    ? 'load-paths.json names no page rendered per request that answers 200'
    : chunksOf(rendered.at(0)).length === 0
      ? `the route of ${rendered.at(0)} has no lazy chunks to hint`
      : false;

let browser;
before(async () => {
  browser = await launchBrowser({ certificate: testCertificate() });
});
after(async () => {
  await browser?.close();
});

/** A fetched file's name as the build's manifests write it: relative to the page's base href. */
const fileName = (pathname) =>
  pathname.startsWith(site.file('')) ? pathname.slice(site.file('').length) : pathname;

/** Loads `url` in a fresh context: protocol, what each file was fetched for, policy violations. */
async function load(url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.addInitScript(() => {
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.violations.push(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  await page.goto(url);
  // Hydrated: the last `ngh` attribute is gone.
  await page.waitForFunction(() => document.querySelectorAll('[ngh]').length === 0);
  const seen = await page.evaluate(() => ({
    protocol: performance.getEntriesByType('navigation')[0].nextHopProtocol,
    initiators: performance
      .getEntriesByType('resource')
      .map((entry) => [new URL(entry.name).pathname, entry.initiatorType]),
    violations: window.violations,
  }));
  await context.close();
  const initiators = Object.fromEntries(
    seen.initiators.map(([pathname, initiator]) => [fileName(pathname), initiator]),
  );
  return { ...seen, initiators, problems, path: new URL(url).pathname };
}

/** Whether a load fetched its entry script because of the 103. */
const usedHints = (seen) =>
  Object.entries(seen.initiators).some(
    ([name, initiator]) => /^main-[\w-]+\.js$/.test(name) && initiator === 'early-hints',
  );

for (const csp of [undefined, 'strict']) {
  describe(`Chromium acts on the 103 over HTTP/2${csp ? ' under CSP=strict' : ''} (${ENGINE} engine)`, () => {
    let origin;
    before(async () => {
      origin = await startOrigin({
        dist: APP_DIST,
        protocol: 'h2',
        env: csp ? { CSP: csp } : {},
        nodeArgs: ['--import', join(ROOT, 'test/fixtures/think-time.mjs')],
      });
    });
    after(async () => {
      await origin?.stop();
    });

    it(
      'fetches a rendered page’s scripts and route chunks from the hints, then hydrates',
      { skip: SKIP },
      async (t) => {
        // Chromium ignored a 103 it was sent in about one load in six here (no
        // Network.responseReceivedEarlyHints, though the origin wrote it each time): up to five
        // fresh pages, each of which must hydrate cleanly, and one of which must use the hints.
        const loads = [];
        for (let attempt = 0; attempt < 5 && !loads.some(usedHints); attempt++) {
          // Pages nobody asked for yet, so each renders (and its 103 goes out while it does).
          const path = rendered.at((csp ? 110 : 100) + attempt);
          const seen = await load(`${origin.url}${path}`);
          assert.equal(seen.protocol, 'h2');
          assert.deepEqual(seen.violations, []);
          assert.deepEqual(seen.problems, []);
          loads.push(seen);
        }
        t.diagnostic(`loads until one used the hints: ${loads.length}`);
        const hinted = loads.find(usedHints);
        assert.ok(hinted, JSON.stringify(loads.map((seen) => seen.initiators)));
        for (const chunk of chunksOf(hinted.path)) {
          assert.equal(
            hinted.initiators[chunk],
            'early-hints',
            `${chunk}: ${JSON.stringify(hinted.initiators)}`,
          );
        }
      },
    );
  });
}

describe(`the app's route chunks on a rendered page (${ENGINE} engine)`, () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ dist: APP_DIST });
  });
  after(async () => {
    await origin?.stop();
  });

  it(
    'names every chunk of the route in Link and in a modulepreload tag',
    { skip: SKIP },
    async () => {
      for (const path of [rendered.at(1), rendered.at(2)]) {
        const res = await request(origin.url, path);
        assert.equal(res.status, 200);
        const chunks = chunksOf(path);
        assert.ok(chunks.length > 0, path);
        for (const chunk of chunks) {
          assert.ok(
            res.text.includes(`<link rel="modulepreload" href="${chunk}">`),
            `${path}: ${chunk}`,
          );
          assert.ok(
            res.headers.link.includes(`<${site.file(chunk)}>; rel=modulepreload`),
            `${path}: ${chunk}`,
          );
        }
      }
    },
  );
});
