// The demo's pages are made of data its API sends during the render (src/api/, answered by the
// origin on /api/…), and the browser never fetches again what the server fetched: Angular's
// transfer cache carries the server's responses in the page, keyed by the URL the browser would ask
// (src/app/api-url.ts maps the server's API_URL to the page's origin). A client-side navigation
// then asks the API itself. About the demo's data, so it goes with it (docs/your-app.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeCatalog, makeProduct } from '../../src/api/products.ts';
import { appPageSession, waitForHydration } from '../helpers/browser.mjs';
import { site } from '../helpers/site.mjs';

const s = appPageSession();
/**
 * The pages' address as visitors have it: another origin than the loopback address the server's
 * renders fetch the API at (127.0.0.1), as a public host always is, so the transfer cache must map one
 * to the other (on one and the same origin a test could not tell).
 */
const publicUrl = () => s.origin.url.replace('//127.0.0.1:', '//localhost:');

/** Every request the page makes to the API from now on, by path. */
function apiRequests(page) {
  const paths = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/api/')) paths.push(pathname);
  });
  return paths;
}

/** Loads `path` and waits until it is hydrated and the network has been quiet for half a second. */
async function loadHydrated(path) {
  const response = await s.page.goto(`${publicUrl()}${site.page(path)}`);
  assert.equal(response.status(), 200, path);
  await waitForHydration(s.page);
  await s.page.waitForLoadState('networkidle');
  return response;
}

describe("the demo's data in a real browser", () => {
  it('a product page fetches nothing from the API after hydration: the server sent its data', async () => {
    const asked = apiRequests(s.page);
    const response = await loadHydrated('/products/41');
    const html = await response.text();
    // The server fetched the product and the catalog: both are in the page's transfer state.
    const state = /<script id="ng-state" type="application\/json">([^<]*)<\/script>/.exec(html);
    assert.ok(state, 'the page carries its transfer state');
    assert.match(state[1], new RegExp(`"name":"${makeProduct(41).name}"`));
    assert.match(state[1], /"categories":\[/);
    assert.deepEqual(asked, [], 'the browser asked the API for what the server had fetched');
    assert.equal(await s.page.locator('h1').textContent(), makeProduct(41).name);
    const category = makeCatalog().categories.find((c) => c.slug === makeProduct(41).category);
    assert.equal(await s.page.locator('.breadcrumb a').last().textContent(), category.name);
    assert.deepEqual(s.problems, []);
  });

  it('a client-side navigation to another product fetches it from the API and shows it', async () => {
    const asked = apiRequests(s.page);
    await loadHydrated('/products/41');
    const answered = s.page.waitForResponse((r) => r.url().endsWith('/api/products/42'));
    await s.page.getByRole('link', { name: 'Next' }).click();
    const product = await answered;
    assert.equal(product.status(), 200);
    assert.deepEqual(await product.json(), makeProduct(42));
    await s.page.locator('h1', { hasText: makeProduct(42).name }).waitFor();
    assert.equal(new URL(s.page.url()).pathname, site.page('/products/42'));
    assert.deepEqual(asked, ['/api/products/42'], 'only the product navigated to');
    assert.deepEqual(s.problems, []);
  });

  it('the product listing comes with its catalog, and opens a product through the API', async () => {
    const asked = apiRequests(s.page);
    await loadHydrated('/products');
    assert.deepEqual(asked, [], 'the catalog came with the page');
    const { categories } = makeCatalog();
    assert.equal(await s.page.locator('h2').count(), categories.length);
    const first = categories[0].featured[0];
    await s.page.getByRole('link', { name: first.name }).click();
    await s.page.locator('h1', { hasText: first.name }).waitFor();
    assert.ok(asked.includes(`/api/products/${first.id}`), asked.join(', '));
    assert.deepEqual(s.problems, []);
  });
});
