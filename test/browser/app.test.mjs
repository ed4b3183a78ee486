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

/** The nav links marked as the current page, by label. */
async function currentNavLinks() {
  return page.locator('nav a[aria-current="page"]').evaluateAll((links) => links.map((link) => link.textContent.trim()));
}

/** Every description tag's content: one per page, updated in place on client navigation. */
async function descriptions() {
  return page.locator('meta[name="description"]').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('content')));
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
    assert.deepEqual(await descriptions(), [makeProduct(42).description], 'one description, updated in place');
    assert.equal(await page.getByRole('link', { name: 'Products' }).getAttribute('aria-current'), 'page', 'Products is the current section');
    assert.equal(await page.getByRole('link', { name: 'Home' }).getAttribute('aria-current'), null);
    await page.screenshot({ path: join(SCREENSHOTS, 'product.png') });
    assert.deepEqual(problems, []);
  });

  it("serves each page's own title and description, and its nav mark, in the server's HTML", async () => {
    const product = makeProduct(41);
    const expected = {
      '/': { status: 200, title: 'Home', description: 'An Angular app served by a fast, tested Koa origin: prerendered, server-rendered and client-only pages.', current: ['/'] },
      '/products/41': { status: 200, title: product.name, description: product.description, current: ['/products/1'] },
      '/async-work?http=0': { status: 200, title: 'Async work', description: 'What a server render waits for: timers, RxJS and an HTTP call.', current: [] },
      '/no/such/page': { status: 404, title: 'Page not found', description: 'There is nothing at this address.', current: [] },
      // No product has id 0: the not-found page, which is in no section of the nav.
      '/products/0': { status: 404, title: 'Page not found', description: 'There is nothing at this address.', current: [] },
    };
    for (const [path, want] of Object.entries(expected)) {
      // The HTML as served, before any script runs: what crawlers and link previews read.
      const response = await fetch(`${origin.url}${path}`);
      const html = await response.text();
      assert.equal(response.status, want.status, path);
      assert.deepEqual([...html.matchAll(/<title>([^<]*)<\/title>/g)].map((match) => match[1]), [`${want.title} · SSR Origin`], path);
      assert.deepEqual(
        [...html.matchAll(/<meta name="description" content="([^"]*)">/g)].map((match) => match[1]),
        [want.description],
        `${path}: exactly one description`,
      );
      assert.deepEqual(
        [...html.matchAll(/<a [^>]*aria-current="page"[^>]*>/g)].map((match) => /href="([^"]*)"/.exec(match[0])?.[1]),
        want.current,
        `${path}: the nav's current section`,
      );
    }
  });

  it('keeps the nav mark through hydration and moves it, with the title and description, on client navigation', async () => {
    // Every change to a nav link's aria-current, from the first byte on.
    await page.addInitScript(() => {
      window.ariaCurrentChanges = [];
      new MutationObserver((mutations) => {
        for (const { target } of mutations) {
          if (target.closest('nav')) window.ariaCurrentChanges.push(`${target.textContent.trim()}=${target.getAttribute('aria-current')}`);
        }
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['aria-current'] });
    });
    await page.goto(`${origin.url}/products/7`);
    // Hydrated includes the product page, which waits for the first navigation to end.
    await waitForHydration();
    assert.deepEqual(await currentNavLinks(), ['Products']);
    const changes = await page.evaluate(() => window.ariaCurrentChanges);
    assert.ok(changes.every((change) => change === 'Products=page'), `hydration moved the mark: ${changes.join(', ')}`);

    // The current link looks different from the others.
    const background = (name) => page.locator('nav').getByRole('link', { name }).evaluate((link) => getComputedStyle(link).backgroundColor);
    assert.notEqual(await background('Products'), await background('Home'), 'the current section is visible');

    await page.locator('nav').getByRole('link', { name: 'Home' }).click();
    await page.getByLabel('First name').waitFor();
    assert.deepEqual(await currentNavLinks(), ['Home']);
    assert.equal(await page.title(), 'Home · SSR Origin');
    assert.deepEqual(await descriptions(), ['An Angular app served by a fast, tested Koa origin: prerendered, server-rendered and client-only pages.']);

    await page.locator('nav').getByRole('link', { name: 'Dashboard' }).click();
    await page.getByText('Rendered in the browser.').waitFor();
    assert.deepEqual(await currentNavLinks(), ['Dashboard']);
    assert.equal(await page.title(), 'Dashboard · SSR Origin');
    assert.deepEqual(await descriptions(), ['Your visits, counted in this browser: a page rendered only on the client.']);
    assert.deepEqual(problems, []);
  });

  it('renders the client-only dashboard in the browser', async () => {
    const response = await page.goto(`${origin.url}/dashboard`);
    assert.equal(response.status(), 200);
    assert.ok(!(await response.text()).includes('Rendered in the browser'), 'the server rendered it');
    await page.getByText('Rendered in the browser.').waitFor();
    assert.match(await page.locator('.visits').textContent(), /opened this dashboard once in/);
    assert.equal(await page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current'), 'page');
    // Client-only: the served shell has the app's default head; the page's own is set in the browser.
    assert.equal(await page.title(), 'Dashboard · SSR Origin');
    assert.deepEqual(await descriptions(), ['Your visits, counted in this browser: a page rendered only on the client.']);
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
