// The demo served as the README says for HTTP/2 and Early Hints: TLS_CERT and TLS_KEY on the
// production origin, API_URL unset. Every page is 200 in Chromium over HTTP/2 (the not-found page
// 404) with its data, and no console error: the renders reach the demo's API in the origin's own
// process, never over TLS at 127.0.0.1, which no real certificate names. The origin's Node is not
// told to trust the tests' certificate (NODE_EXTRA_CA_CERTS), as a production Node is not. About the
// demo's pages and data, so it goes with them (docs/your-app.md, "Retiring the demo").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeCatalog, makeProduct } from '../../src/api/products.ts';
import { launchBrowser, waitForHydration, watchedPage } from '../helpers/browser.mjs';
import { APP_DIST, startOrigin, testCertificate } from '../helpers/origin.mjs';
import { site } from '../helpers/site.mjs';

/**
 * Each page of the demo: its status, its heading once hydrated, and what of its data the server's
 * HTML carries (the product pages: from the demo's API during the render) or the browser shows.
 */
const PAGES = [
  { path: '/', status: 200, h1: 'Welcome' },
  { path: '/products', status: 200, h1: 'Products', served: makeCatalog().categories[0].name },
  { path: '/products/7', status: 200, h1: makeProduct(7).name, served: makeProduct(7).description },
  { path: '/account', status: 200, h1: 'Your account', served: 'Not signed in.' },
  { path: '/dashboard', status: 200, h1: 'Dashboard', shows: 'Rendered in the browser.' },
  { path: '/products/0', status: 404, h1: 'Page not found' },
];

/** Console problems but the 404 Chromium reports for the not-found page's own load. */
const besides404 = (problems, status) =>
  problems.filter((problem) => status !== 404 || !/status of 404/.test(problem));

describe('the demo over HTTPS and HTTP/2 in Chromium, API_URL unset', () => {
  let origin;
  let browser;
  before(async () => {
    [origin, browser] = await Promise.all([
      // Its Node trusts no certificate of the tests', whatever this process's environment says.
      startOrigin({ dist: APP_DIST, protocol: 'h2', env: { NODE_EXTRA_CA_CERTS: '' } }),
      launchBrowser({ certificate: testCertificate() }),
    ]);
  });
  after(async () => {
    await browser?.close();
    await origin?.stop();
  });

  for (const { path, status, h1, served, shows } of PAGES) {
    it(`${path}: ${status} over HTTP/2 with its data, no console error`, async () => {
      const { page, problems } = await watchedPage(browser);
      try {
        const response = await page.goto(`${origin.url}${site.page(path)}`);
        assert.equal(response.status(), status);
        if (served !== undefined) {
          assert.ok((await response.text()).includes(served), `the server's HTML has ${served}`);
        }
        await waitForHydration(page);
        assert.equal(
          await page.evaluate(() => performance.getEntriesByType('navigation')[0].nextHopProtocol),
          'h2',
        );
        assert.equal((await page.locator('h1').textContent()).trim(), h1);
        for (const text of [served, shows].filter((text) => text !== undefined)) {
          await page.getByText(text, { exact: true }).first().waitFor();
        }
        assert.deepEqual(besides404(problems, status), []);
      } finally {
        await page.close();
      }
    });
  }
});
