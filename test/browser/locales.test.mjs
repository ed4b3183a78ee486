// The localized build (dist-test-i18n/: en-US, fr, de) in Chromium, for the engine of this run: a
// browser whose language is German lands on /de from the site root, and each locale's prerendered,
// server-rendered and client-only pages load in that locale and hydrate without a console error.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_APP_I18N_DIST } from '../../scripts/lib/paths.mjs';
import { launchBrowser, waitForHydration, watchedPage } from '../helpers/browser.mjs';
import { startOrigin } from '../helpers/origin.mjs';

const LOCALES = ['en-US', 'fr', 'de'];

let origin;
let browser;
before(async () => {
  [origin, browser] = await Promise.all([
    startOrigin({ dist: TEST_APP_I18N_DIST }),
    launchBrowser(),
  ]);
});
after(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('a localized build in a real browser', () => {
  it('sends a browser set to German from the site root to /de', async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${origin.url}/`);
      assert.equal(new URL(page.url()).pathname, '/de');
      assert.equal(response.status(), 200);
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
    } finally {
      await context.close();
    }
  });

  for (const locale of LOCALES) {
    it(`loads and hydrates ${locale}'s pages in ${locale}, without a console error`, async () => {
      for (const path of ['', '/products/7', '/seen/5']) {
        const { page, problems } = await watchedPage(browser);
        try {
          const served = await (await fetch(`${origin.url}/${locale}${path}`)).text();
          const heading = /<h1[^>]*>([^<]*)</.exec(served)[1];
          // The app's bundle waits while the visitor acts on the server's page: hydration keeps its
          // nodes (translated blocks included) and replays what was done, where rendering afresh
          // would replace them and lose it.
          let release;
          const held = new Promise((resolve) => (release = resolve));
          await page.route(/\/main-[^/]+\.js$/, async (route) => {
            await held;
            await route.continue();
          });
          const loading = page.goto(`${origin.url}/${locale}${path}`, { waitUntil: 'commit' });
          await page.locator('h1').first().waitFor({ state: 'attached' });
          await page.evaluate(() => {
            window.serverHeading = document.querySelector('h1');
          });
          const counter =
            path === '' ? page.getByRole('button', { name: /Clicked 0 times/ }) : undefined;
          await counter?.click();
          release();
          const response = await loading;
          assert.equal(response.status(), 200);
          await waitForHydration(page);
          assert.ok(
            await page.evaluate(() => document.querySelector('h1') === window.serverHeading),
            `${locale}${path}: the server's heading was replaced, not hydrated`,
          );
          if (counter) {
            await page.getByRole('button', { name: /Clicked 1 times/ }).waitFor();
          }
          assert.equal(await page.evaluate(() => document.documentElement.lang), locale);
          assert.equal((await page.locator('h1').first().textContent()).trim(), heading.trim());
          assert.deepEqual(problems, [], `${locale}${path}`);
        } finally {
          await page.close();
        }
      }
    });
  }

  it('renders the client-only page of each locale in the browser, in that locale', async () => {
    for (const locale of LOCALES) {
      const { page, problems } = await watchedPage(browser);
      try {
        await page.goto(`${origin.url}/${locale}/dashboard`);
        await page.locator('h1').first().waitFor();
        assert.equal(await page.evaluate(() => document.documentElement.lang), locale);
        assert.equal(
          await page.evaluate(() => document.querySelector('base')?.getAttribute('href')),
          `/${locale}/`,
        );
        assert.deepEqual(problems, [], locale);
      } finally {
        await page.close();
      }
    }
  });
});
