// The app in src/ as a person sees it, whatever its pages: real Chromium against the production
// origin over loopback, on the pages load-paths.json names (docs/your-app.md). What each page should
// say is read from the app itself: its status from load-paths.json, its head from the HTML the
// server rendered, which the browser must keep through hydration and client navigation. So these
// keep testing the app when its pages change; the demo's own pages are tested in demo.test.mjs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  PAGE_THEN_APP,
  descriptions,
  followFirstLink,
  launchBrowser,
  servedPage,
  waitForHydration,
  watchedPage,
} from '../helpers/browser.mjs';
import { APP_DIST, startOrigin } from '../helpers/origin.mjs';
import { siteLoadPaths } from '../helpers/site.mjs';

/** load-paths.json's pages, under the source locale on a localized build. */
const PATHS = siteLoadPaths();
const RENDERED = PATHS.rendered;
/** An address no route matches, other than load-paths.json's own. */
const UNKNOWN = `${PATHS.notFound.replace(/\/$/, '')}/nothing/here`;
/** The pages the server renders (at build time or per request), with the status each must have. */
const SERVER_RENDERED = [
  { path: PATHS.prerendered, status: 200 },
  ...(RENDERED
    ? [...new Set([RENDERED.at(0), RENDERED.at(1)])].map((path) => ({
        path,
        status: RENDERED.status,
      }))
    : []),
  { path: PATHS.notFound, status: 404 },
];

let origin;
let browser;
before(async () => {
  // The app's own build (src/), not the origin's test app.
  [origin, browser] = await Promise.all([startOrigin({ dist: APP_DIST }), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await origin?.stop();
});

/** Console problems but the 404 Chromium reports for a not-found page's own load. */
const besides404 = (problems, status) =>
  problems.filter((problem) => status !== 404 || !/status of 404/.test(problem));

describe("the app's pages (load-paths.json) in a real browser", () => {
  it("serves each with its status and a head of its own in the server's HTML", async () => {
    const heads = new Map();
    for (const { path, status } of [...SERVER_RENDERED, { path: UNKNOWN, status: 404 }]) {
      const served = await servedPage(origin.url, path);
      assert.equal(served.status, status, path);
      assert.equal(served.titles.length, 1, `${path}: exactly one title`);
      assert.match(served.titles[0], PAGE_THEN_APP, `${path}: the page's title, then the app's`);
      assert.equal(served.descriptions.length, 1, `${path}: exactly one description`);
      assert.notEqual(served.descriptions[0].trim(), '', `${path}: a description`);
      heads.set(path, { title: served.titles[0], description: served.descriptions[0] });
    }
    const appNames = [...heads.values()].map(({ title }) => PAGE_THEN_APP.exec(title)[2]);
    assert.equal(new Set(appNames).size, 1, `one app name in every title: ${appNames.join(', ')}`);
    // Any unknown address gets the not-found page's head; the other pages each one of their own.
    assert.deepEqual(heads.get(UNKNOWN), heads.get(PATHS.notFound));
    const own = SERVER_RENDERED.filter(({ status }) => status !== 404).map(({ path }) => path);
    for (const path of own) {
      assert.notDeepEqual(heads.get(path), heads.get(PATHS.notFound), `${path}: not the 404's`);
      if (path !== PATHS.prerendered)
        assert.notDeepEqual(heads.get(path), heads.get(PATHS.prerendered), path);
    }
  });

  for (const { path, status } of SERVER_RENDERED) {
    it(`hydrates ${path} (${status}) with the head and heading the server rendered, without a console error`, async () => {
      const { page, problems } = await watchedPage(browser);
      try {
        const served = await servedPage(origin.url, path);
        const response = await page.goto(`${origin.url}${path}`);
        assert.equal(response.status(), status);
        await waitForHydration(page);
        assert.equal(await page.title(), served.titles[0]);
        assert.deepEqual(await descriptions(page), served.descriptions);
        if (served.h1)
          assert.equal((await page.locator('h1').first().textContent()).trim(), served.h1.trim());
        assert.deepEqual(besides404(problems, status), []);
      } finally {
        await page.close();
      }
    });
  }

  it('navigates on the client from a rendered page: no reload, the head of the page it shows', async () => {
    const from = SERVER_RENDERED[1];
    const { page, problems } = await watchedPage(browser);
    try {
      await page.goto(`${origin.url}${from.path}`);
      await waitForHydration(page);
      const documents = [];
      page.on('request', (request) => {
        if (request.resourceType() === 'document') documents.push(request.url());
      });
      const to = await followFirstLink(page);
      const served = await servedPage(origin.url, to);
      await page.waitForFunction((title) => document.title === title, served.titles[0]);
      assert.deepEqual(await descriptions(page), served.descriptions, 'one description, in place');
      assert.deepEqual(documents, [], 'navigation reloaded the page instead of routing');
      assert.deepEqual(besides404(problems, from.status), []);
    } finally {
      await page.close();
    }
  });

  it(
    'renders the client-only page in the browser, with a head of its own',
    {
      skip: PATHS.clientOnly ? false : 'load-paths.json names no "clientOnly" page',
    },
    async () => {
      const shell = await servedPage(origin.url, PATHS.clientOnly);
      assert.equal(shell.status, 200);
      assert.match(shell.html, /<app-root[^>]*><\/app-root>/, 'the server sent the empty shell');
      const { page, problems } = await watchedPage(browser);
      try {
        await page.goto(`${origin.url}${PATHS.clientOnly}`);
        await page.waitForFunction((shellTitle) => document.title !== shellTitle, shell.titles[0]);
        assert.match(await page.title(), PAGE_THEN_APP, "the page's title, then the app's");
        const [description, ...more] = await descriptions(page);
        assert.deepEqual(more, [], 'one description');
        assert.ok(description?.trim(), 'a description of its own');
        assert.deepEqual(problems, []);
      } finally {
        await page.close();
      }
    },
  );
});
