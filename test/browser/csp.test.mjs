// CSP=strict in real Chromium, on the app (dist/, built from src/) and on the tests' app
// (dist-test/): every kind of page loads with zero policy violations and no console errors,
// hydrates and navigates on the client; what was done before hydration is replayed; a revalidated
// reload (304) still runs; Report-Only reports nothing; and an injected script (the tests' app's
// /injected) is blocked and reported while the app's own script there (given Angular's CSP_NONCE)
// runs. The app's pages are the ones load-paths.json names, so this follows the app in src/
// whatever its pages (docs/your-app.md); the tests' app's are fixed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  followFirstLink,
  launchBrowser,
  waitForHydration,
  watchedPage as problemsPage,
} from '../helpers/browser.mjs';
import { listenOnFreePort } from '../../scripts/lib/ports.mjs';
import { APP_DIST, DIST, ROOT, startOrigin } from '../helpers/origin.mjs';
import { siteLoadPaths } from '../helpers/site.mjs';
import { waitFor } from '../helpers/wait.mjs';

/** A report endpoint on loopback: what the browser posts to the policy's report-uri. */
async function startReportCollector() {
  const reports = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      reports.push(JSON.parse(Buffer.concat(chunks).toString() || '{}'));
      res.writeHead(204).end();
    });
  });
  const port = await listenOnFreePort(server);
  return {
    reports,
    url: `http://127.0.0.1:${port}/reports`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

let browser;
let collector;
before(async () => {
  // test:browser builds the demo; the tests' app is built here when it is missing or stale.
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/ensure-build.mjs'), 'test-app'], {
    encoding: 'utf8',
  });
  assert.equal(build.status, 0, `building the tests' app failed:\n${build.stdout}${build.stderr}`);
  [browser, collector] = await Promise.all([launchBrowser(), startReportCollector()]);
});
after(async () => {
  await browser?.close();
  await collector?.close();
});

/** A new page that records policy violations (from the first byte) and console problems. */
async function watchedPage() {
  const { page, problems } = await problemsPage(browser);
  await page.addInitScript(() => {
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.violations.push(`${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  return { page, problems, violations: () => page.evaluate(() => window.violations) };
}

/** The nonce the page's scripts run with (the attribute reads empty once the page has loaded). */
function pageNonce(page) {
  return page.evaluate(() => document.querySelector('script[nonce]').nonce);
}

/** The app's own bundle waits until `release` is called: the page is there, not yet hydrated. */
async function holdBundle(page) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route(/\/main-[^/]+\.js$/, async (route) => {
    await held;
    await route.continue();
  });
  return release;
}

/** load-paths.json's pages, under the source locale on a localized build. */
const PATHS = siteLoadPaths();

/**
 * Each app's pages: the one rendered per request (and whether its route is cached), the others
 * rendered per request or in the browser with their status, and how to act on the prerendered page
 * before hydration where the app has something to act on.
 * @type {Record<string, { dist: string, prerendered: string, rendered?: { path: string, status: number, cached: boolean },
 *   others: [string, number][], clientOnly?: string, navigate: (page: import('playwright-core').Page) => Promise<unknown>,
 *   actBeforeHydration?: (page: import('playwright-core').Page) => Promise<void>,
 *   checkReplayed?: (page: import('playwright-core').Page) => Promise<void> }>}
 */
const APPS = {
  // The app in src/ (the demo, or yours): its pages from load-paths.json.
  app: {
    dist: APP_DIST,
    prerendered: PATHS.prerendered,
    rendered: PATHS.rendered && {
      path: PATHS.rendered.at(0),
      status: PATHS.rendered.status,
      cached: PATHS.rendered.cached,
    },
    others: [
      ...(PATHS.rendered && PATHS.rendered.count > 1
        ? [[PATHS.rendered.at(1), PATHS.rendered.status]]
        : []),
      ...(PATHS.clientOnly ? [[PATHS.clientOnly, 200]] : []),
      [PATHS.notFound, 404],
    ],
    clientOnly: PATHS.clientOnly,
    navigate: followFirstLink,
  },
  'tests’ app': {
    dist: DIST,
    prerendered: '/',
    rendered: { path: '/products/41', status: 200, cached: true },
    others: [
      ['/async-work', 200],
      ['/dashboard', 200],
      ['/no/such/page', 404],
    ],
    clientOnly: '/dashboard',
    // Another page of the same route: the router reuses the component for the new parameter.
    async navigate(page) {
      await page.getByRole('link', { name: 'Next' }).click();
      await page.waitForURL(/\/products\/42$/);
      await page.locator('h1').filter({ hasNotText: 'Loading' }).first().waitFor();
    },
    // Its counter button is bound before hydration only through the event contract (an inline
    // script that must run under the policy).
    async actBeforeHydration(page) {
      await page.getByRole('button', { name: /Clicked 0 times/ }).click();
    },
    async checkReplayed(page) {
      await page.getByRole('button', { name: /Clicked 1 times/ }).waitFor();
    },
  },
};

for (const [name, app] of Object.entries(APPS)) {
  describe(`CSP=strict in Chromium: the ${name}`, () => {
    let origin;
    before(async () => {
      origin = await startOrigin({
        dist: app.dist,
        env: { CSP: 'strict', CSP_DIRECTIVES: `report-uri ${collector.url}` },
      });
    });
    after(() => origin?.stop());

    it('prerendered page: no violation, replays what was done before hydration, and a revalidated reload runs', async () => {
      const { page, problems, violations } = await watchedPage();
      try {
        const url = `${origin.url}${app.prerendered}`;
        if (app.actBeforeHydration) {
          const release = await holdBundle(page);
          const first = page.goto(url, { waitUntil: 'commit' });
          await app.actBeforeHydration(page);
          release();
          assert.equal((await first).status(), 200);
        } else {
          assert.equal((await page.goto(url)).status(), 200);
        }
        await waitForHydration(page);
        await app.checkReplayed?.(page);
        assert.deepEqual(await violations(), []);

        // A second navigation revalidates (If-None-Match): the 304 carries no policy, the
        // browser keeps the stored page and its policy, and the page still runs.
        await page.unrouteAll();
        const nonce = await pageNonce(page);
        const second = await page.goto(url);
        const sent = await second.request().allHeaders();
        assert.ok(sent['if-none-match'], 'Chromium did not revalidate');
        // The same nonce: the browser runs its stored copy (a 200 would carry a new one).
        assert.equal(await pageNonce(page), nonce, 'the page was sent again, not revalidated');
        await waitForHydration(page);
        assert.deepEqual(await violations(), []);
        assert.deepEqual(problems, []);
      } finally {
        await page.close();
      }
    });

    it(
      'the page rendered per request, cached (miss then hit) and revalidated: no violation, client navigation',
      {
        skip: app.rendered ? false : 'load-paths.json names no "rendered" page',
      },
      async () => {
        const { path, status, cached } = app.rendered;
        // A route without a shared-cache policy renders every time: three visits of one kind.
        for (const visit of cached ? ['miss', 'hit', 'revalidated'] : ['render']) {
          const { page, problems, violations } = await watchedPage();
          try {
            const response = await page.goto(`${origin.url}${path}`);
            assert.equal(response.status(), status, path);
            if (visit === 'miss' || visit === 'hit') {
              assert.match(
                response.headers()['cache-status'],
                visit === 'miss' ? /fwd=uri-miss/ : /; hit/,
              );
            }
            await waitForHydration(page);
            if (visit === 'revalidated') {
              const nonce = await pageNonce(page);
              const again = await page.goto(`${origin.url}${path}`);
              assert.ok((await again.request().allHeaders())['if-none-match']);
              assert.equal(
                await pageNonce(page),
                nonce,
                'the page was sent again, not revalidated',
              );
              await waitForHydration(page);
            }
            await app.navigate(page);
            assert.deepEqual(await violations(), [], visit);
            assert.deepEqual(
              problems.filter((problem) => status !== 404 || !/status of 404/.test(problem)),
              [],
              visit,
            );
          } finally {
            await page.close();
          }
        }
      },
    );

    it('the other pages rendered per request or in the browser, and the not-found page: no violation', async () => {
      for (const [path, status] of app.others) {
        const { page, problems, violations } = await watchedPage();
        try {
          const response = await page.goto(`${origin.url}${path}`);
          assert.equal(response.status(), status, path);
          if (path === app.clientOnly) {
            // Client-only: the browser renders it (the app's styles added with the nonce).
            await page.waitForFunction(
              () => (document.querySelector('router-outlet')?.nextElementSibling ?? null) !== null,
            );
          } else {
            await waitForHydration(page);
          }
          await followFirstLink(page);
          assert.deepEqual(await violations(), [], path);
          assert.deepEqual(
            problems.filter((problem) => !/status of 404/.test(problem)),
            [],
            path,
          );
        } finally {
          await page.close();
        }
      }
    });
  });
}

describe('CSP in Chromium: what it blocks and what report-only reports', () => {
  it('blocks and reports a script injected through a bypassed sanitizer', async () => {
    const origin = await startOrigin({
      env: { CSP: 'strict', CSP_DIRECTIVES: `report-uri ${collector.url}` },
    });
    const { page, violations } = await watchedPage();
    try {
      const before = collector.reports.length;
      await page.goto(`${origin.url}/injected`);
      await page.locator('.attack').waitFor();
      await waitForHydration(page);
      assert.equal(await page.evaluate(() => window.injected), undefined, 'the script ran');
      if (process.env.RENDER_ENGINE === 'app') {
        // Angular's own engine renders from the build's index, not the origin's: CSP_NONCE is null
        // while it renders, so the app cannot add a script of its own on the server
        // (docs/content-security-policy.md, docs/choosing-an-engine.md).
        assert.equal(await page.evaluate(() => window.trusted), undefined);
        assert.deepEqual(await violations(), ['script-src-elem inline']);
      } else {
        // The app's own script, given CSP_NONCE on the server, ran.
        assert.equal(
          await page.evaluate(() => window.trusted),
          true,
          "the app's script was blocked",
        );
        assert.deepEqual(await violations(), ['script-src-elem inline']);
      }
      await reportedAfter(collector, before);
      const report = collector.reports.at(-1)['csp-report'];
      assert.equal(report['violated-directive'], 'script-src-elem');
      assert.equal(report['blocked-uri'], 'inline');
      assert.equal(report['disposition'], 'enforce');
    } finally {
      await page.close();
      await origin.stop();
    }
  });

  for (const [name, app] of Object.entries(APPS)) {
    it(`reports nothing in Report-Only mode for every page of the ${name}`, async () => {
      const origin = await startOrigin({
        dist: app.dist,
        env: { CSP: 'report-only', CSP_DIRECTIVES: `report-uri ${collector.url}` },
      });
      const before = collector.reports.length;
      try {
        // Every page twice over for the rendered one: a render, then (if cached) the cache's copy.
        const paths = [
          app.prerendered,
          ...(app.rendered ? [app.rendered.path, app.rendered.path] : []),
          ...app.others.map(([path]) => path),
        ];
        for (const path of paths) {
          const { page, violations } = await watchedPage();
          try {
            await page.goto(`${origin.url}${path}`);
            await page.waitForLoadState('networkidle');
            assert.deepEqual(await violations(), [], path);
          } finally {
            await page.close();
          }
        }
        // Reports are posted asynchronously: give them time to arrive before saying there are none.
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.deepEqual(collector.reports.slice(before), []);
        if (app.dist === DIST) {
          // The same setup does report what the policy would block (so the silence above is real).
          const { page } = await watchedPage();
          await page.goto(`${origin.url}/injected`);
          await reportedAfter(collector, before);
          await page.close();
          assert.equal(collector.reports.at(-1)['csp-report'].disposition, 'report');
        }
      } finally {
        await origin.stop();
      }
    });
  }
});

/** Waits (up to 5 s) until the report collector holds more than `before` reports. */
function reportedAfter(collector, before) {
  return waitFor(() => collector.reports.length > before, { what: 'CSP report', timeoutMs: 5000 });
}
