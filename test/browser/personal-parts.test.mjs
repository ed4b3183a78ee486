// The demo's personal part (src/app/app.parts.ts `greeting` on /products/:id) as a visitor sees it,
// in Chromium against the production origin over loopback: the origin puts a signed-in visitor's
// greeting and cart count into their copy of the cached page, so it is there before any script
// runs; the app then re-creates the part (ngSkipHydration) from the state the origin sent inline,
// without asking the API again, without a hydration warning and without showing the placeholder on
// the way; after a client navigation the part asks the API itself; and the page does not move when
// the part takes the placeholder's place. These tests are the demo's: an app that replaces the demo
// pages replaces them. What the origin sends, byte by byte, is test/server/personal-parts.test.mjs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, waitForHydration, watchedPage } from '../helpers/browser.mjs';
import { primeGreeting, welcome } from '../helpers/greeting.mjs';
import { APP_DIST, startOrigin } from '../helpers/origin.mjs';
import { site } from '../helpers/site.mjs';

let origin;
let browser;

before(async () => {
  [origin, browser] = await Promise.all([startOrigin({ dist: APP_DIST }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await origin?.stop();
});

/** What the demo's API calls the visitor of session `sid` (src/api/visitors.ts). */
const PLACEHOLDER = 'Sign in to keep a cart.';

/**
 * A visitor's browser: a context with the `sid` cookie as the demo's /account page sets it (a
 * script-readable cookie, `path=/; samesite=lax`: account.ts), none when `sid` is undefined, and a
 * page that collects its console problems and its requests for the visitor's data (`GET /api/me`).
 * `javaScript: false` is a browser that runs no script: what the server sent, as it sent it.
 * Every text the part's `.greeting` shows is recorded from the first byte on (a MutationObserver,
 * which reports each state that lasts past a task, i.e. one the browser could paint).
 */
async function visitor(sid, { javaScript = true, viewport } = {}) {
  const context = await browser.newContext({ javaScriptEnabled: javaScript, viewport });
  // What a page shows here it shows at once: a missing element fails in seconds, not half a minute.
  context.setDefaultTimeout(10_000);
  if (sid !== undefined) {
    const { hostname } = new URL(origin.url);
    await context.addCookies([
      { name: 'sid', value: sid, domain: hostname, path: '/', sameSite: 'Lax' },
    ]);
  }
  const { page, problems } = await watchedPage(context);
  const api = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (/\/api\/(me|cart)$/.test(pathname))
      api.push(`${request.method()} ${pathname.slice(pathname.indexOf('/api/'))}`);
  });
  await page.addInitScript(() => {
    const seen = [];
    Object.defineProperty(window, '__greetings', { value: seen });
    const note = () => {
      const text = document
        .querySelector('personal-part .greeting')
        ?.textContent.replace(/\s+/g, ' ')
        .trim();
      if (seen.at(-1) !== text) seen.push(text);
    };
    new MutationObserver(note).observe(document, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  return { context, page, problems, api };
}

/** The texts the part's greeting showed since the page began, none (undefined) while it was absent. */
const greetings = (page) => page.evaluate(() => window.__greetings);
const greetingOf = (page) => page.locator('personal-part .greeting').textContent();
const cartCountOf = (page) => page.locator('personal-part .cart-count').textContent();

describe('a personal part in the browser', () => {
  it("is in a signed-in visitor's page as the server sent it, before any script runs", async () => {
    const sid = 'noscr1pt';
    await primeGreeting(origin.url, site.page('/products/7'), sid);
    const { context, page, problems } = await visitor(sid, { javaScript: false });
    try {
      const response = await page.goto(`${origin.url}${site.page('/products/7')}`);
      assert.equal(response.status(), 200);
      assert.equal((await response.allHeaders())['cache-control'], 'private, no-cache');
      assert.equal(await greetingOf(page), welcome(sid));
      assert.equal(await cartCountOf(page), '0');
      assert.equal(await page.getByText(PLACEHOLDER).count(), 0);
      // The origin's markers are its own: none reaches the browser.
      assert.equal(await page.locator('template[data-origin-part]').count(), 0);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('hydrates around it without a warning, a flash or a second request, and its button changes what the server sends next', async () => {
    const sid = 'hydr4ted';
    await primeGreeting(origin.url, site.page('/products/7'), sid);
    const { context, page, problems, api } = await visitor(sid);
    try {
      await page.goto(`${origin.url}${site.page('/products/7')}`);
      assert.equal(await greetingOf(page), welcome(sid), 'at the load event');
      await waitForHydration(page);
      assert.equal(await greetingOf(page), welcome(sid), 'once hydrated');
      assert.equal(await cartCountOf(page), '0');
      // From its first paint on, the greeting said one thing: never the placeholder, never gone.
      const shown = await greetings(page);
      assert.deepEqual(shown.slice(shown.indexOf(welcome(sid))), [welcome(sid)], shown.join(' | '));
      assert.deepEqual(api, [], "the part's inline state answered its requests");

      await page.getByRole('button', { name: 'Add to cart' }).click();
      await page.locator('personal-part .cart-count', { hasText: '1' }).waitFor();
      assert.deepEqual(api, ['POST /api/cart']);

      // The API revalidated the visitor's group: the next page the origin sends counts it, though
      // the visitor's part is otherwise reused for a minute (app.parts.ts).
      const reloaded = await page.reload();
      assert.match(await reloaded.text(), /<span class="cart-count">1<\/span>/);
      await waitForHydration(page);
      assert.equal(await cartCountOf(page), '1');
      assert.deepEqual(api, ['POST /api/cart'], 'the reload asked the API nothing either');
      assert.deepEqual(problems, [], 'no hydration mismatch, no console error or warning');
    } finally {
      await context.close();
    }
  });

  it("shows the visitor's own data after client navigation away and back, never the placeholder", async () => {
    const sid = 'n4vigate';
    await primeGreeting(origin.url, site.page('/products/7'), sid);
    const { context, page, problems, api } = await visitor(sid);
    try {
      await page.goto(`${origin.url}${site.page('/products/7')}`);
      await waitForHydration(page);
      const documents = [];
      page.on(
        'request',
        (request) => request.resourceType() === 'document' && documents.push(request.url()),
      );
      // The breadcrumb's router link to the list, then the list's router link to another product.
      await page.getByRole('link', { name: 'Shop' }).click();
      await page.waitForURL((url) => url.pathname === site.page('/products'));
      const listed = page.locator('mat-nav-list a[href*="/products/"]');
      // The list is made of the catalog, which the browser fetches after this navigation.
      await listed.first().waitFor();
      const other = await listed
        .evaluateAll((links) => links.map((link) => link.getAttribute('href')))
        .then((hrefs) => hrefs.find((href) => !href.endsWith('/products/7')));
      await page.locator(`a[href="${other}"]`).first().click();
      await page.waitForURL((url) => url.pathname === other);
      await page.locator('personal-part .greeting', { hasText: welcome(sid) }).waitFor();
      await page.locator('personal-part .cart-count').waitFor();
      // And back through history to the first product.
      await page.goBack();
      await page.goBack();
      await page.waitForURL((url) => url.pathname === site.page('/products/7'));
      await page.locator('personal-part .greeting', { hasText: welcome(sid) }).waitFor();
      assert.deepEqual(documents, [], 'navigation reloaded the page instead of routing');
      // Created anew on each product page, the part asked the API for the visitor (its code).
      assert.deepEqual(api, ['GET /api/me', 'GET /api/me']);
      const shown = await greetings(page);
      assert.ok(!shown.includes(PLACEHOLDER), `the placeholder showed: ${shown.join(' | ')}`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('shows a visitor without a session the placeholder of the shared page, and asks the API nothing', async () => {
    const { context, page, problems, api } = await visitor(undefined);
    try {
      const response = await page.goto(`${origin.url}${site.page('/products/7')}`);
      assert.doesNotMatch((await response.allHeaders())['cache-control'], /private/);
      assert.equal(await greetingOf(page), PLACEHOLDER);
      await waitForHydration(page);
      assert.equal(await greetingOf(page), PLACEHOLDER);
      assert.equal(await page.getByRole('button', { name: 'Add to cart' }).count(), 0);
      assert.deepEqual(api, []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it("keeps the page's layout whether it holds the placeholder or the visitor's part, at any width", async () => {
    // The part's box and the box of what follows it, as the server sent the page and once
    // hydrated: the same for a visitor without a session and a signed-in one.
    const layoutOf = async (page) =>
      Promise.all(
        ['personal-part', 'personal-part + *'].map((selector) =>
          page.locator(selector).boundingBox(),
        ),
      );
    await primeGreeting(origin.url, site.page('/products/7'), 'l4yout00');
    for (const width of [1280, 360]) {
      const viewport = { width, height: 800 };
      const layouts = {};
      for (const [name, sid, javaScript] of [
        ['placeholder, served', undefined, false],
        ['part, served', 'l4yout00', false],
        ['part, hydrated', 'l4yout00', true],
      ]) {
        const { context, page } = await visitor(sid, { javaScript, viewport });
        try {
          await page.goto(`${origin.url}${site.page('/products/7')}`);
          if (javaScript) await waitForHydration(page);
          assert.equal(await greetingOf(page), sid ? welcome(sid) : PLACEHOLDER);
          layouts[name] = await layoutOf(page);
        } finally {
          await context.close();
        }
      }
      const [first, ...others] = Object.values(layouts);
      for (const other of others)
        assert.deepEqual(other, first, `${width} px: ${JSON.stringify(layouts)}`);
    }
  });
});
