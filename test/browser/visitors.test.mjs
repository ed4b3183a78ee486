// Visitors with cookies, as a person sees the demo (src/app): real Chromium against the production
// origin over loopback. The product page is shared (one cached page per currency, whatever else the
// visitor carries); a signed-in visitor's greeting is a personal part the origin puts into their copy
// of it (personal-parts.test.mjs); the account page is private and rendered with the visitor's own
// request. These tests are the demo's: an app that
// replaces the demo pages replaces them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeProduct } from '../../src/api/products.ts';
import { formatPrice } from '../../src/app/currency.ts';
import { launchBrowser, watchedPage } from '../helpers/browser.mjs';
import { primeGreeting } from '../helpers/greeting.mjs';
import { APP_DIST, startOrigin } from '../helpers/origin.mjs';
import { site } from '../helpers/site.mjs';

let origin;
let browser;
/** The greeting part's placeholder (product.ts): what a visitor without a session sees. */
const SIGN_IN = 'Sign in to keep a cart.';

before(async () => {
  [origin, browser] = await Promise.all([startOrigin({ dist: APP_DIST }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await origin?.stop();
});

/** A visitor with these cookies: its page, what its console said, and each document response. */
async function visitor(cookies) {
  const context = await browser.newContext();
  const { hostname } = new URL(origin.url);
  await context.addCookies(
    Object.entries(cookies).map(([name, value]) => ({ name, value, domain: hostname, path: '/' })),
  );
  const { page, problems } = await watchedPage(context);
  return { context, page, problems };
}

/** Hydration is over once Angular removed the last ngh attribute. */
async function hydrated(page) {
  await page.waitForFunction(() => document.querySelectorAll('[ngh]').length === 0);
}

/**
 * Loads the app's page `path` (site.page): the HTML the server sent, its Cache-Status, and the page
 * once hydrated.
 */
async function load(page, path) {
  const response = await page.goto(`${origin.url}${site.page(path)}`);
  const html = await response.text();
  await hydrated(page);
  return { html, cacheStatus: (await response.allHeaders())['cache-status'] };
}

describe('visitors with cookies', () => {
  it('greets a signed-in visitor in their copy of a page shared with everyone in their currency', async () => {
    const product = makeProduct(7);
    const anonymous = await visitor({});
    const signedIn = await visitor({ sid: 'abc123', currency: 'USD', _ga: 'GA1.2.3.4' });
    const dollars = await visitor({ currency: 'USD', consent: 'yes' });
    try {
      const first = await load(anonymous.page, '/products/7');
      assert.ok(first.html.includes(formatPrice(product.priceCents, 'EUR')), 'euros by default');
      assert.equal(await anonymous.page.locator('.greeting').textContent(), SIGN_IN);

      // The visitor's part rendered and kept first (plain HTTP): on a busy CI machine a render
      // that misses the part's 300 ms sends the placeholder (test/server/personal-parts' case).
      await primeGreeting(origin.url, site.page('/products/7'), 'abc123');
      const personal = await load(signedIn.page, '/products/7');
      assert.match(personal.html, /Welcome back, Visitor abc1/);
      assert.match(personal.html, /<span[^>]* class="price">\$/);
      assert.match(await signedIn.page.locator('.greeting').textContent(), /Welcome back/);
      assert.match(await signedIn.page.locator('.price').textContent(), /^\$/);

      // Another visitor in dollars, other cookies: the same page, from the cache, holding nobody.
      const shared = await load(dollars.page, '/products/7');
      assert.match(shared.cacheStatus, /^render-cache; hit/);
      assert.doesNotMatch(shared.html, /Welcome back|abc1/, 'the shared page holds nobody');
      assert.equal(await dollars.page.locator('.greeting').textContent(), SIGN_IN);
      for (const { problems } of [anonymous, signedIn, dollars]) {
        assert.deepEqual(problems, [], 'no hydration mismatch, no console error');
      }
    } finally {
      await Promise.all([anonymous, signedIn, dollars].map(({ context }) => context.close()));
    }
  });

  it('changes the currency in the page, and the next page the server renders is in it', async () => {
    const { context, page, problems } = await visitor({ _ga: 'GA1.2.9.9' });
    try {
      await load(page, '/products/8');
      await page.getByRole('radio', { name: 'GBP' }).click();
      await page.locator('.price', { hasText: '£' }).waitFor();
      const next = await load(page, '/products/8');
      assert.match(next.html, /<span[^>]* class="price">£/);
      assert.match(next.cacheStatus, /^render-cache; (hit|fwd=uri-miss)/);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it("renders the private account page with the visitor's own session, never cached", async () => {
    const { context, page, problems } = await visitor({ sid: 'c0ffee42' });
    try {
      const response = await page.goto(`${origin.url}${site.page('/account')}`);
      const headers = await response.allHeaders();
      assert.match(await response.text(), /c0ffee42/, 'the server read the session from REQUEST');
      assert.equal(headers['cache-control'], 'private, no-store');
      assert.equal(headers['cache-status'], undefined);
      await hydrated(page);
      assert.match(await page.locator('.session').textContent(), /c0ffee42/);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('.session', { hasText: 'Not signed in' }).waitFor();
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
