// Debian's Chromium driven by playwright-core (Playwright's own browser download cannot run here),
// and what the browser tests read from a page: hydration, the server's own HTML, its head.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { launchBrowser } from '../../scripts/lib/chromium.mjs';
import { APP_DIST, ROOT, startOrigin } from './origin.mjs';

/** Where the browser tests leave their screenshots. */
export const SCREENSHOTS = join(ROOT, 'test-results');

// The browser tests' Chromium: the one the tools share (scripts/lib/chromium.mjs).
export { CHROMIUM, launchBrowser } from '../../scripts/lib/chromium.mjs';

/**
 * A new page that collects console errors and warnings and page errors in `problems`.
 * @param {import('playwright-core').Browser | import('playwright-core').BrowserContext} browser a
 *   browser, or one of its contexts (a visitor's cookies)
 */
export async function watchedPage(browser) {
  const page = await browser.newPage();
  /** @type {string[]} */
  const problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { page, problems };
}

/** Angular marks the app stable once hydration has finished; wait for that, not for a time. */
export async function waitForHydration(page) {
  await page.waitForFunction(() => {
    const root = document.querySelector('app-root');
    return (
      root !== null && !root.hasAttribute('ngh') && document.querySelectorAll('[ngh]').length === 0
    );
  });
}

/** The text of an HTML attribute or element as the browser reads it. */
const decode = (text) =>
  text.replace(
    /&(?:quot|#39|lt|gt|amp);/g,
    (entity) => ({ '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' })[entity],
  );

/**
 * What the server sent for `path`, before any script runs (what crawlers and link previews read):
 * status, every <title>, every description and the first <h1>, as the app's routes made them.
 * @param {string} baseUrl @param {string} path
 */
export async function servedPage(baseUrl, path) {
  const response = await fetch(`${baseUrl}${path}`);
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
export async function descriptions(page) {
  return page
    .locator('meta[name="description"]')
    .evaluateAll((tags) => tags.map((tag) => tag.getAttribute('content')));
}

/** A title as the app's title strategy writes it: the page's own, then the app's name. */
export const PAGE_THEN_APP = /^(\S.*) · (\S.*)$/;

/**
 * Follows the page's first link to another page of the app (`routerLink`s render as `href="/…"`)
 * and resolves with that path once the browser shows it; fails when the page links nowhere.
 * @param {import('playwright-core').Page} page
 */
export async function followFirstLink(page) {
  const here = new URL(page.url()).pathname;
  const hrefs = await page
    .locator('a[href^="/"]')
    .evaluateAll((links) => links.map((link) => link.getAttribute('href')));
  const href = hrefs.find((candidate) => new URL(candidate, page.url()).pathname !== here);
  if (href === undefined) throw new Error(`${here} links to no other page of the app`);
  await page.locator(`a[href="${href}"]`).first().click();
  await page.waitForURL((url) => url.pathname === new URL(href, page.url()).pathname);
  return href;
}

/**
 * The hooks of a test file that loads the app's pages (src/, built into dist/) in Chromium: one
 * origin and one browser for the file, a fresh page for each test with its console problems.
 * Read the fields inside the tests: they are set by the hooks.
 * @returns {{ origin: Awaited<ReturnType<typeof startOrigin>>, page: import('playwright-core').Page, problems: string[] }}
 */
export function appPageSession() {
  const session = /** @type {any} */ ({});
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [session.origin, session.browser] = await Promise.all([
      startOrigin({ dist: APP_DIST }),
      launchBrowser(),
    ]);
  });
  after(async () => {
    await session.browser?.close();
    await session.origin?.stop();
  });
  beforeEach(async () => Object.assign(session, await watchedPage(session.browser)));
  afterEach(() => session.page.close());
  return session;
}
