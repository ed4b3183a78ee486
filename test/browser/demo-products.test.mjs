// The demo's products in Chromium: each links to the next in the browser's router, with its own
// head, and the nav marks the Products section on every product page, through hydration and client
// navigation. About the demo's product page and nav, so it goes with them (docs/your-app.md,
// "Retiring the demo"); pages.test.mjs tests any app's pages. Titles and descriptions are the app's
// own (products.ts; the app's name as its titles end), never written here.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeProduct } from '../../src/api/products.ts';
import {
  PAGE_THEN_APP,
  SCREENSHOTS,
  appPageSession,
  descriptions,
  servedPage,
  waitForHydration,
} from '../helpers/browser.mjs';
import { site } from '../helpers/site.mjs';

const s = appPageSession();
/** The app's name, as its titles end: read from the home page the server rendered. */
const appNameOf = async () =>
  PAGE_THEN_APP.exec((await servedPage(s.origin.url, site.page('/'))).titles[0])[2];

/** The nav links marked as the current page, by label. */
async function currentNavLinks() {
  return s.page
    .locator('nav a[aria-current="page"]')
    .evaluateAll((links) => links.map((link) => link.textContent.trim()));
}

describe('the demo products in a real browser', () => {
  it("links each product to the next, in the browser's router, with the product's own head", async () => {
    const appName = await appNameOf();
    const response = await s.page.goto(`${s.origin.url}${site.page('/products/41')}`);
    assert.equal(response.status(), 200);
    await waitForHydration(s.page);
    assert.equal(await s.page.locator('h1').textContent(), makeProduct(41).name);
    const documentRequests = [];
    s.page.on(
      'request',
      (request) => request.resourceType() === 'document' && documentRequests.push(request.url()),
    );
    await s.page.getByRole('link', { name: 'Next' }).click();
    await s.page.locator('h1', { hasText: makeProduct(42).name }).waitFor();
    assert.equal(new URL(s.page.url()).pathname, site.page('/products/42'));
    assert.deepEqual(
      documentRequests,
      [],
      'navigation reloaded the page instead of routing in the browser',
    );
    // The product's own title and description, in the server's HTML and after client navigation.
    const served = await response.text();
    assert.ok(served.includes(`<title>${makeProduct(41).name} · ${appName}</title>`));
    assert.ok(
      served.includes(`<meta name="description" content="${makeProduct(41).description}">`),
      'the description is in the served HTML',
    );
    assert.equal(await s.page.title(), `${makeProduct(42).name} · ${appName}`);
    assert.deepEqual(
      await descriptions(s.page),
      [makeProduct(42).description],
      'one description, updated in place',
    );
    assert.equal(
      await s.page.getByRole('link', { name: 'Products' }).getAttribute('aria-current'),
      'page',
      'Products is the current section',
    );
    assert.equal(
      await s.page.getByRole('link', { name: 'Home' }).getAttribute('aria-current'),
      null,
    );
    await s.page.screenshot({ path: join(SCREENSHOTS, 'product.png') });
    assert.deepEqual(s.problems, []);
  });

  it("marks Products on every product page in the server's HTML, and no section where no product is", async () => {
    const appName = await appNameOf();
    for (const [path, status, current] of [
      ['/products/41', 200, [site.page('/products')]],
      ['/products', 200, [site.page('/products')]],
      ['/async-work?http=0', 200, []],
      // No product has id 0: the not-found page, which is in no section of the nav.
      ['/products/0', 404, []],
    ]) {
      const served = await servedPage(s.origin.url, site.page(path));
      assert.equal(served.status, status, path);
      assert.deepEqual(
        [...served.html.matchAll(/<a [^>]*aria-current="page"[^>]*>/g)].map(
          (match) => /href="([^"]*)"/.exec(match[0])?.[1],
        ),
        current,
        `${path}: the nav's current section`,
      );
    }
    const product = await servedPage(s.origin.url, site.page('/products/41'));
    assert.deepEqual(product.titles, [`${makeProduct(41).name} · ${appName}`]);
    assert.deepEqual(product.descriptions, [makeProduct(41).description]);
    const [noProduct, notFound] = await Promise.all(
      ['/products/0', '/no/such/page'].map((path) => servedPage(s.origin.url, site.page(path))),
    );
    assert.deepEqual(
      [noProduct.titles, noProduct.descriptions],
      [notFound.titles, notFound.descriptions],
      "an id that names no product gets the not-found page's head",
    );
  });

  it('keeps the nav mark through hydration and moves it, with the title and description, to Home', async () => {
    // Every change to a nav link's aria-current, from the first byte on.
    await s.page.addInitScript(() => {
      window.ariaCurrentChanges = [];
      new MutationObserver((mutations) => {
        for (const { target } of mutations) {
          if (target.closest('nav'))
            window.ariaCurrentChanges.push(
              `${target.textContent.trim()}=${target.getAttribute('aria-current')}`,
            );
        }
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['aria-current'] });
    });
    await s.page.goto(`${s.origin.url}${site.page('/products/7')}`);
    // Hydrated includes the product page, which waits for the first navigation to end.
    await waitForHydration(s.page);
    assert.deepEqual(await currentNavLinks(), ['Products']);
    const changes = await s.page.evaluate(() => window.ariaCurrentChanges);
    assert.ok(
      changes.every((change) => change === 'Products=page'),
      `hydration moved the mark: ${changes.join(', ')}`,
    );

    // The current link looks different from the others.
    const background = (name) =>
      s.page
        .locator('nav')
        .getByRole('link', { name })
        .evaluate((link) => getComputedStyle(link).backgroundColor);
    assert.notEqual(
      await background('Products'),
      await background('Home'),
      'the current section is visible',
    );

    // The head the server renders for each page is the one the browser must show after navigating to it.
    const home = await servedPage(s.origin.url, site.page('/'));
    await s.page.locator('nav').getByRole('link', { name: 'Home' }).click();
    // The router writes the home page's address as its base href: `/en-US/` on a localized build.
    await s.page.waitForURL(`${s.origin.url}${site.prefix}/`);
    await s.page.waitForFunction((title) => document.title === title, home.titles[0]);
    assert.deepEqual(await currentNavLinks(), ['Home']);
    assert.deepEqual(await descriptions(s.page), home.descriptions);

    assert.deepEqual(s.problems, []);
  });
});
