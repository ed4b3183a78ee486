// A rolling deploy as a visitor lives it, in Chromium: a page of build A is open, A's origin is
// replaced by build B's on the same address, and the visitor goes to a route whose lazy chunk the
// page has not loaded yet. With ASSET_ARCHIVE, B serves A's chunk from the archive and the route
// opens in place; without it, the chunk is a 404 and the demo app loads the route anew, once
// (src/app/chunk-error.ts), from B. Build B is the demo's build with every hashed name changed
// (test/helpers/next-build.mjs).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../scripts/lib/ports.mjs';
import { launchBrowser } from '../helpers/browser.mjs';
import { nextBuild } from '../helpers/next-build.mjs';
import { APP_DIST, ENGINE, ROOT, published, startOrigin } from '../helpers/origin.mjs';
import { site, siteLoadPaths } from '../helpers/site.mjs';

const B = join(ROOT, 'test-results', `dist-app-next-build-${process.pid}`);
let browser;
before(async () => {
  [browser] = await Promise.all([launchBrowser(), nextBuild(APP_DIST, B)]);
});
after(async () => {
  await browser?.close();
  rmSync(B, { recursive: true, force: true });
});

/** The app's prerendered page (load-paths.json): a page that has not loaded the dashboard's chunk. */
const { prerendered } = siteLoadPaths();

/** Opens a page of build A, then puts build B's origin on A's address. */
async function deployWhileOpen(archiveEnv) {
  const port = String(await freePort());
  // A connection Chromium opened ahead and never used is not idle to Node: draining would wait
  // out the grace period for it (10 s by default), so A gets a short one.
  const a = await startOrigin({
    dist: APP_DIST,
    env: { PORT: port, SHUTDOWN_GRACE_MS: '500', ...archiveEnv },
  });
  if (archiveEnv.ASSET_ARCHIVE) await published(a);
  const page = await browser.newPage();
  const documents = [];
  const failed = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'document') documents.push(new URL(request.url()).pathname);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(new URL(response.url()).pathname);
  });
  await page.goto(`${a.url}${prerendered}`);
  await page.waitForFunction(() => document.querySelectorAll('[ngh]').length === 0);
  await a.stop();
  const b = await startOrigin({ dist: B, env: { PORT: port, ...archiveEnv } });
  if (archiveEnv.ASSET_ARCHIVE) await published(b);
  documents.length = 0;
  return { page, b, documents, failed };
}

describe(`a page of the previous build after a deploy (${ENGINE} engine)`, () => {
  it('opens a lazy route in place with ASSET_ARCHIVE: the new build serves the old chunk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'asset-archive-'));
    const { page, b, documents, failed } = await deployWhileOpen({ ASSET_ARCHIVE: dir });
    try {
      await page.getByRole('link', { name: 'Dashboard' }).click();
      await page.locator('h1', { hasText: 'Dashboard' }).waitFor();
      assert.deepEqual(documents, [], 'the route opened in place');
      assert.deepEqual(failed, []);
    } finally {
      await page.close();
      await b.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads the route anew, once, without it: the chunk is a 404, the new build answers', async () => {
    const { page, b, documents, failed } = await deployWhileOpen({});
    try {
      await page.getByRole('link', { name: 'Dashboard' }).click();
      await page.waitForURL('**/dashboard');
      await page.locator('h1', { hasText: 'Dashboard' }).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('[ngh]').length === 0);
      assert.deepEqual(documents, [site.page('/dashboard')], 'one reload, to the route asked for');
      assert.equal(failed.length, 1, `one chunk of the old build was missing: ${failed}`);
      assert.match(failed[0], new RegExp(`^${RegExp.escape(site.file('chunk-'))}[\\w-]+\\.js$`));
    } finally {
      await page.close();
      await b.stop();
    }
  });
});
