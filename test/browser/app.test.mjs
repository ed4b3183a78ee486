// The app as a person sees it: real Chromium against the production origin over loopback.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, afterEach, describe, it } from 'node:test';
import { makeProduct } from '../../src/app/products.ts';
import { launchBrowser } from '../helpers/browser.mjs';
import { APP_DIST, ROOT, startOrigin } from '../helpers/origin.mjs';

const SCREENSHOTS = join(ROOT, 'test-results');
let origin;
let browser;
let page;
let problems;

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // The demo app's own build (src/), not the origin's test app.
  [origin, browser] = await Promise.all([startOrigin({ dist: APP_DIST }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await origin?.stop();
});
beforeEach(async () => {
  page = await browser.newPage();
  problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
});
afterEach(async () => {
  await page.close();
});

/** Angular marks the app stable once hydration has finished; wait for that, not for a time. */
async function waitForHydration() {
  await page.waitForFunction(() => {
    const root = document.querySelector('app-root');
    return root !== null && !root.hasAttribute('ngh') && document.querySelectorAll('[ngh]').length === 0;
  });
}

describe('in a real browser', () => {
  it('hydrates the prerendered home page and the form works', async () => {
    const response = await page.goto(`${origin.url}/`);
    assert.equal(response.status(), 200);
    await waitForHydration();
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('status').filter({ hasText: 'Hello, Ada Lovelace!' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'home.png') });
    assert.deepEqual(problems, []);
  });

  it('hydrates a server-rendered product and navigates on the client', async () => {
    const response = await page.goto(`${origin.url}/products/41`);
    assert.equal(response.status(), 200);
    await waitForHydration();
    assert.equal(await page.locator('h1').textContent(), makeProduct(41).name);
    const documentRequests = [];
    page.on('request', (request) => request.resourceType() === 'document' && documentRequests.push(request.url()));
    await page.getByRole('link', { name: 'Next' }).click();
    await page.locator('h1', { hasText: makeProduct(42).name }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/products/42');
    assert.deepEqual(documentRequests, [], 'navigation reloaded the page instead of routing in the browser');
    // The product's own title and description, in the server's HTML and after client navigation.
    const served = await response.text();
    assert.match(served, new RegExp(`<title>${makeProduct(41).name} · SSR Origin</title>`));
    assert.ok(served.includes(`<meta name="description" content="${makeProduct(41).description}">`), 'the description is in the served HTML');
    assert.equal(await page.title(), `${makeProduct(42).name} · SSR Origin`);
    assert.deepEqual(await page.locator('meta[name="description"]').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('content'))), [makeProduct(42).description], 'one description, updated in place');
    assert.equal(await page.getByRole('link', { name: 'Products' }).getAttribute('aria-current'), 'page', 'Products is the current section');
    assert.equal(await page.getByRole('link', { name: 'Home' }).getAttribute('aria-current'), null);
    await page.screenshot({ path: join(SCREENSHOTS, 'product.png') });
    assert.deepEqual(problems, []);
  });

  it('renders the client-only dashboard in the browser', async () => {
    const response = await page.goto(`${origin.url}/dashboard`);
    assert.equal(response.status(), 200);
    assert.ok(!(await response.text()).includes('Rendered in the browser'), 'the server rendered it');
    await page.getByText('Rendered in the browser.').waitFor();
    assert.match(await page.locator('.visits').textContent(), /opened this dashboard once in/);
    assert.equal(await page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current'), 'page');
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard.png') });
    assert.deepEqual(problems, []);
  });

  it('shows the not-found page for an unknown address', async () => {
    const response = await page.goto(`${origin.url}/no/such/page`);
    assert.equal(response.status(), 404);
    await waitForHydration();
    assert.equal(await page.locator('h1').textContent(), 'Page not found');
    await page.getByRole('link', { name: 'Go home' }).click();
    await page.getByLabel('First name').waitFor();
    // The 404 itself is reported by Chromium as a failed resource load; nothing else may be.
    assert.deepEqual(problems.filter((problem) => !/status of 404/.test(problem)), []);
  });
});
