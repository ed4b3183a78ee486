// The demo app as a person sees it: real Chromium against the production origin over loopback.
// These tests are the demo's (src/app: the form on the home page, the products, the dashboard):
// `ng new --demo=false` leaves them out, and an app that replaces the demo pages replaces them.
// Titles and descriptions are not written here: they are the app's own (app.routes.ts), read from
// the HTML the server rendered, and the browser must show the same, so rewording a page breaks
// nothing here.
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
    return (
      root !== null && !root.hasAttribute('ngh') && document.querySelectorAll('[ngh]').length === 0
    );
  });
}

/** The nav links marked as the current page, by label. */
async function currentNavLinks() {
  return page
    .locator('nav a[aria-current="page"]')
    .evaluateAll((links) => links.map((link) => link.textContent.trim()));
}

/** The text of an HTML attribute or element as the browser reads it. */
const decode = (text) =>
  text.replace(
    /&(?:quot|#39|lt|gt|amp);/g,
    (entity) => ({ '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' })[entity],
  );

/**
 * What the server rendered for `path`, before any script runs (what crawlers and link previews
 * read): status, every <title>, every description and the <h1>, from the app's own routes.
 */
async function servedPage(path) {
  const response = await fetch(`${origin.url}${path}`);
  const html = await response.text();
  return {
    status: response.status,
    html,
    titles: [...html.matchAll(/<title>([^<]*)<\/title>/g)].map((match) => decode(match[1])),
    descriptions: [...html.matchAll(/<meta name="description" content="([^"]*)">/g)].map((match) =>
      decode(match[1]),
    ),
    h1: decode(/<h1[^>]*>([^<]*)<\/h1>/.exec(html)?.[1] ?? ''),
  };
}

/** Every description tag's content: one per page, updated in place on client navigation. */
async function descriptions() {
  return page
    .locator('meta[name="description"]')
    .evaluateAll((tags) => tags.map((tag) => tag.getAttribute('content')));
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
    page.on(
      'request',
      (request) => request.resourceType() === 'document' && documentRequests.push(request.url()),
    );
    await page.getByRole('link', { name: 'Next' }).click();
    await page.locator('h1', { hasText: makeProduct(42).name }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/products/42');
    assert.deepEqual(
      documentRequests,
      [],
      'navigation reloaded the page instead of routing in the browser',
    );
    // The product's own title and description, in the server's HTML and after client navigation.
    const served = await response.text();
    assert.match(served, new RegExp(`<title>${makeProduct(41).name} · SSR Origin</title>`));
    assert.ok(
      served.includes(`<meta name="description" content="${makeProduct(41).description}">`),
      'the description is in the served HTML',
    );
    assert.equal(await page.title(), `${makeProduct(42).name} · SSR Origin`);
    assert.deepEqual(
      await descriptions(),
      [makeProduct(42).description],
      'one description, updated in place',
    );
    assert.equal(
      await page.getByRole('link', { name: 'Products' }).getAttribute('aria-current'),
      'page',
      'Products is the current section',
    );
    assert.equal(await page.getByRole('link', { name: 'Home' }).getAttribute('aria-current'), null);
    await page.screenshot({ path: join(SCREENSHOTS, 'product.png') });
    assert.deepEqual(problems, []);
  });

  it("serves each page's own title and description, and its nav mark, in the server's HTML", async () => {
    const product = makeProduct(41);
    const expected = {
      '/': { status: 200, current: ['/'] },
      '/products/41': {
        status: 200,
        title: product.name,
        description: product.description,
        current: ['/products/1'],
      },
      '/async-work?http=0': { status: 200, current: [] },
      '/no/such/page': { status: 404, current: [] },
      // No product has id 0: the not-found page, which is in no section of the nav.
      '/products/0': { status: 404, current: [] },
    };
    const heads = {};
    for (const [path, want] of Object.entries(expected)) {
      const { status, html, titles, descriptions } = await servedPage(path);
      heads[path] = { title: titles[0], description: descriptions[0] };
      assert.equal(status, want.status, path);
      assert.equal(titles.length, 1, `${path}: exactly one title`);
      assert.match(titles[0], /^\S.* · SSR Origin$/, `${path}: the page's title, then the app's`);
      assert.equal(descriptions.length, 1, `${path}: exactly one description`);
      assert.notEqual(descriptions[0].trim(), '', `${path}: a description`);
      if (want.title) assert.equal(titles[0], `${want.title} · SSR Origin`, path);
      if (want.description) assert.equal(descriptions[0], want.description, path);
      assert.deepEqual(
        [...html.matchAll(/<a [^>]*aria-current="page"[^>]*>/g)].map(
          (match) => /href="([^"]*)"/.exec(match[0])?.[1],
        ),
        want.current,
        `${path}: the nav's current section`,
      );
    }
    // Each page its own head; any unknown address the not-found page's.
    const pages = ['/', '/products/41', '/async-work?http=0', '/no/such/page'];
    for (const field of ['title', 'description']) {
      assert.equal(
        new Set(pages.map((path) => heads[path][field])).size,
        pages.length,
        `one ${field} per page`,
      );
    }
    assert.deepEqual(heads['/products/0'], heads['/no/such/page']);
  });

  it('keeps the nav mark through hydration and moves it, with the title and description, on client navigation', async () => {
    // Every change to a nav link's aria-current, from the first byte on.
    await page.addInitScript(() => {
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
    await page.goto(`${origin.url}/products/7`);
    // Hydrated includes the product page, which waits for the first navigation to end.
    await waitForHydration();
    assert.deepEqual(await currentNavLinks(), ['Products']);
    const changes = await page.evaluate(() => window.ariaCurrentChanges);
    assert.ok(
      changes.every((change) => change === 'Products=page'),
      `hydration moved the mark: ${changes.join(', ')}`,
    );

    // The current link looks different from the others.
    const background = (name) =>
      page
        .locator('nav')
        .getByRole('link', { name })
        .evaluate((link) => getComputedStyle(link).backgroundColor);
    assert.notEqual(
      await background('Products'),
      await background('Home'),
      'the current section is visible',
    );

    // The head the server renders for each page is the one the browser must show after navigating to it.
    const home = await servedPage('/');
    await page.locator('nav').getByRole('link', { name: 'Home' }).click();
    await page.waitForURL(`${origin.url}/`);
    await page.waitForFunction((title) => document.title === title, home.titles[0]);
    assert.deepEqual(await currentNavLinks(), ['Home']);
    assert.deepEqual(await descriptions(), home.descriptions);

    await page.locator('nav').getByRole('link', { name: 'Dashboard' }).click();
    await page.getByText('Rendered in the browser.').waitFor();
    assert.deepEqual(await currentNavLinks(), ['Dashboard']);
    // Client-only: the server renders no head of its own for it, so its own one is checked in
    // 'renders the client-only dashboard in the browser'; here, that navigation moved them.
    assert.match(await page.title(), /^\S.* · SSR Origin$/);
    assert.notEqual(await page.title(), home.titles[0]);
    const [dashboardDescription, ...more] = await descriptions();
    assert.deepEqual(more, [], 'one description');
    assert.ok(
      dashboardDescription && dashboardDescription !== home.descriptions[0],
      'the description moved with the page',
    );
    assert.deepEqual(problems, []);
  });

  it('renders the client-only dashboard in the browser', async () => {
    const response = await page.goto(`${origin.url}/dashboard`);
    assert.equal(response.status(), 200);
    assert.ok(
      !(await response.text()).includes('Rendered in the browser'),
      'the server rendered it',
    );
    await page.getByText('Rendered in the browser.').waitFor();
    assert.match(await page.locator('.visits').textContent(), /opened this dashboard once in/);
    assert.equal(
      await page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current'),
      'page',
    );
    // Client-only: the served shell has the app's default head; the page's own is set in the browser.
    const shell = await servedPage('/dashboard');
    assert.match(await page.title(), /^\S.* · SSR Origin$/, "the page's title, then the app's");
    assert.notDeepEqual(
      [await page.title()],
      shell.titles,
      "the page's own title, not the shell's",
    );
    const [description, ...more] = await descriptions();
    assert.deepEqual(more, [], 'one description');
    assert.ok(description?.trim(), 'a description of its own');
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard.png') });
    assert.deepEqual(problems, []);
  });

  it('shows the not-found page for an unknown address', async () => {
    const response = await page.goto(`${origin.url}/no/such/page`);
    assert.equal(response.status(), 404);
    await waitForHydration();
    assert.equal(
      await page.locator('h1').textContent(),
      (await servedPage('/no/such/page')).h1,
      'the heading the server rendered, hydrated',
    );
    const home = await servedPage('/');
    await page.getByRole('link', { name: 'Go home' }).click();
    await page.waitForURL(`${origin.url}/`);
    await page.waitForFunction((title) => document.title === title, home.titles[0]);
    // The 404 itself is reported by Chromium as a failed resource load; nothing else may be.
    assert.deepEqual(
      problems.filter((problem) => !/status of 404/.test(problem)),
      [],
    );
  });
});
