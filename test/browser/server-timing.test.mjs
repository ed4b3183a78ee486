// SERVER_TIMING=1 as a developer sees it: what Chromium's DevTools and the page's own code read from
// `performance.getEntriesByType('navigation')[0].serverTiming` — how the render cache answered, the
// render, the time it waited on its API — on the origin's tests' app (a page made of data, its API
// on loopback), and nothing of it with the setting off.
import assert from 'node:assert/strict';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchBrowser } from '../helpers/browser.mjs';
import { startOrigin } from '../helpers/origin.mjs';

/** An API that takes 50 ms an answer. */
function startApi() {
  return serveOnLoopback(async (req, res) => {
    await sleep(50);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=30' });
    res.end(JSON.stringify({ name: 'catalog', id: '1', title: 'item' }));
  });
}

/** The navigation's Server-Timing entries, by name. */
async function serverTiming(page) {
  const entries = await page.evaluate(() =>
    performance
      .getEntriesByType('navigation')[0]
      .serverTiming.map(({ name, duration, description }) => ({ name, duration, description })),
  );
  return new Map(entries.map((entry) => [entry.name, entry]));
}

describe('Server-Timing in Chromium', () => {
  let api;
  let browser;
  before(async () => {
    [api, browser] = await Promise.all([startApi(), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await api?.close();
  });

  it('a miss shows its render and the wait on its API; the same page again shows a hit', async () => {
    const origin = await startOrigin({ env: { SERVER_TIMING: 'true', TEST_DATA_API: api.url } });
    const page = await browser.newPage();
    try {
      await page.goto(`${origin.url}/data/3`);
      const miss = await serverTiming(page);
      assert.equal(miss.get('cache')?.description, 'miss');
      assert.ok(miss.get('render').duration > 0);
      // Two fetches at once, 50 ms each: about 50 ms of waiting, counted once.
      assert.ok(miss.get('data').duration >= 45, JSON.stringify([...miss.values()]));
      assert.equal(miss.get('data').description, 'miss 2');
      assert.ok(miss.get('total').duration >= miss.get('render').duration);

      await page.reload();
      const hit = await serverTiming(page);
      assert.equal(hit.get('cache')?.description, 'hit');
      assert.equal(hit.has('render'), false);
      assert.ok(hit.get('total').duration < miss.get('total').duration);
    } finally {
      await page.close();
      await origin.stop();
    }
  });

  it('is off unless SERVER_TIMING says so', async () => {
    const origin = await startOrigin({ env: { TEST_DATA_API: api.url } });
    const page = await browser.newPage();
    try {
      await page.goto(`${origin.url}/data/4`);
      assert.deepEqual([...(await serverTiming(page)).keys()], []);
    } finally {
      await page.close();
      await origin.stop();
    }
  });
});
