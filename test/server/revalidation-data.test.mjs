// Revalidation reaches the data a page was made from: after a price change and one revalidation
// call, soft or hard, by group or by path, the next page made is made of the new price, and no page
// made of the old one goes out fresh. test/app's `data/:id` (shared for a minute) asks an API on
// loopback for the catalog and its item; the API here changes an item's price on demand, with an
// ETag per version, `public, max-age=60` (what a real shop's API says), and counts what it answered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { http1Load } from '../../scripts/lib/http1-load.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { at, request, startOrigin } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const TOKEN = 'revalidation-data-test-token-0123456789';

/** An API whose items have a price that changes, each version its own ETag. */
async function startShopApi() {
  const prices = new Map();
  /** Per item: how long its answer takes. */
  const delays = new Map();
  const asked = [];
  const received = [];
  const api = await serveOnLoopback(async (req, res) => {
    const conditional = req.headers['if-none-match'];
    const path = req.url;
    received.push(path);
    // Read when asked, sent after the delay: a render that asked before a change gets the old price.
    const id = path.split('/').pop();
    const price = prices.get(id) ?? 10;
    const etag = `"${path}-${price}"`;
    await sleep(delays.get(id) ?? 5);
    const notModified = conditional === etag;
    asked.push({ path, conditional: conditional !== undefined, status: notModified ? 304 : 200 });
    const headers = {
      'cache-control': 'public, max-age=60',
      etag,
      'cache-tag': path === '/catalog' ? 'catalog' : `item-${id}`,
    };
    if (notModified) {
      res.writeHead(304, headers).end();
      return;
    }
    const body =
      path === '/catalog' ? { name: 'catalog' } : { id, title: `item ${id} at ${price}` };
    res.writeHead(200, { ...headers, 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return {
    ...api,
    asked,
    received,
    setPrice: (id, price) => prices.set(String(id), price),
    setDelay: (id, ms) => delays.set(String(id), ms),
    /** What the API answered for `path` since `from` (an index into `asked`). */
    since: (from, path) => asked.slice(from).filter((call) => call.path === path),
  };
}

const priceOf = (page) => /<p class="item">item \d+ at (\d+)<\/p>/.exec(page.text)?.[1];

/** Whether a cache downstream would take this answer as fresh: its Age below its s-maxage. */
const sentFresh = (page) => {
  const sMaxage = Number(/s-maxage=(\d+)/.exec(page.headers['cache-control'] ?? '')?.[1] ?? 0);
  return Number(page.headers.age ?? 0) < sMaxage;
};

/** The renders the origin has begun (/healthz). */
const rendersStarted = async (origin) =>
  JSON.parse((await request(origin.url, '/healthz')).text).renders.started;

/** The revalidations the origin heard from other processes (/healthz). */
const revalidationsHeard = async (origin) =>
  JSON.parse((await request(origin.url, '/healthz')).text).revalidations.received;

/** The pages the origin has stored in the shared tier, each counted once Redis took it (/healthz). */
const sharedStores = async (origin) =>
  JSON.parse((await request(origin.url, '/healthz')).text).sharedCache.stores;

const revalidate = async (origin, body) => {
  const answer = await request(origin.url, '/_origin/revalidate', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(answer.status, 200, answer.text);
  return JSON.parse(answer.text);
};

/**
 * Asks for `path` until its price is `price` (bounded), and checks every answer on the way: an
 * answer with another price is never sent fresh. Returns the answers, the last with the new price.
 */
async function untilPrice(origin, path, price, headers = {}) {
  const seen = [];
  await waitFor(
    async () => {
      const page = await request(origin.url, path, { headers });
      seen.push(page);
      if (priceOf(page) !== String(price)) {
        assert.ok(
          !sentFresh(page),
          `an old price sent fresh: ${priceOf(page)} with Age ${page.headers.age}, ${page.headers['cache-status']}`,
        );
        return false;
      }
      return true;
    },
    {
      what: `${path} at ${price}`,
      // A bound, not a speed: a loaded CI machine has taken seconds over one refresh.
      timeoutMs: 15_000,
      everyMs: 50,
      seen: () => seen.map((page) => `${priceOf(page)} ${page.headers['cache-status']}`).join('\n'),
    },
  );
  return seen;
}

describe('revalidation reaches the data a page was made from', () => {
  let api;
  let origin;
  before(async () => {
    api = await startShopApi();
    origin = await startOrigin({ env: { TEST_DATA_API: api.url, REVALIDATE_TOKEN: TOKEN } });
  });
  after(async () => {
    await origin?.stop();
    await api?.close();
  });

  /** Renders `path` and serves it from the render cache once, so that it is stored. */
  const cached = async (path) => {
    await request(origin.url, path);
    const hit = await request(origin.url, path);
    assert.match(hit.headers['cache-status'], /render-cache; hit/, path);
    return hit;
  };

  it("soft, by the API's group: the refresh asks the API again, and the old price is never sent fresh", async () => {
    const path = at('/data/7');
    await cached(path);
    api.setPrice(7, 12);
    const from = api.asked.length;
    const rendersBefore = await rendersStarted(origin);
    const report = await revalidate(origin, { groups: ['api:item-7'] });
    assert.ok(report.affected >= 2, `the page and its item: ${JSON.stringify(report)}`);
    await untilPrice(origin, path, 12);
    // Every old price before it went out stale (untilPrice), while one refresh rendered: how many
    // requests came meanwhile is the machine's speed, not the origin's doing.
    assert.equal(
      (await rendersStarted(origin)) - rendersBefore,
      1,
      'one refresh, then the new price',
    );
    assert.deepEqual(api.since(from, '/items/7'), [
      { path: '/items/7', conditional: true, status: 200 },
    ]);
  });

  it('soft, the data unchanged: one conditional request, answered 304, refreshes it', async () => {
    const path = at('/data/17');
    await cached(path);
    const from = api.asked.length;
    await revalidate(origin, { groups: ['api:item-17'] });
    await untilPrice(origin, path, 10);
    await waitFor(() => api.since(from, '/items/17').length > 0, { what: 'a request for item 17' });
    assert.deepEqual(api.since(from, '/items/17'), [
      { path: '/items/17', conditional: true, status: 304 },
    ]);
  });

  for (const mode of ['soft', 'hard']) {
    it(`${mode}, by path: the page's data is revalidated with it`, async () => {
      const path = at(`/data/${mode === 'soft' ? 8 : 9}`);
      const id = mode === 'soft' ? 8 : 9;
      await cached(path);
      api.setPrice(id, 20);
      const report = await revalidate(origin, { paths: [path], mode });
      assert.equal(report.dataOfPaths, 2, `the catalog and the item: ${JSON.stringify(report)}`);
      const seen = await untilPrice(origin, path, 20);
      if (mode === 'hard') {
        assert.equal(seen.length, 1, 'hard: the next answer has the new price');
      }
    });
  }

  it('a request that takes no stale page (max-stale=0, as the shipped Varnish asks) gets the new price at once', async () => {
    const path = at('/data/10');
    await cached(path);
    api.setPrice(10, 30);
    await revalidate(origin, { groups: ['api:item-10'] });
    const page = await request(origin.url, path, { headers: { 'cache-control': 'max-stale=0' } });
    assert.equal(priceOf(page), '30', page.headers['cache-status']);
    assert.ok(sentFresh(page), `fresh for the CDN that asked: Age ${page.headers.age}`);
  });

  it('a render that began before a hard revalidation is not joined, and its page is sent stale and kept nowhere', async () => {
    const path = at('/data/11');
    api.setDelay(11, 600);
    try {
      const first = request(origin.url, path);
      // The render has asked the API for the item, which read the old price.
      await waitFor(() => api.received.includes('/items/11'), {
        what: 'the first render under way',
      });
      api.setPrice(11, 40);
      api.setDelay(11, 5);
      await revalidate(origin, { groups: ['api:item-11'], mode: 'hard' });
      const second = await request(origin.url, path);
      assert.equal(priceOf(second), '40', 'a render of its own, not the one under way');
      const old = await first;
      assert.equal(priceOf(old), '10');
      assert.ok(!sentFresh(old), `the old render's page sent stale: Age ${old.headers.age}`);
      const third = await request(origin.url, path);
      assert.equal(priceOf(third), '40');
    } finally {
      api.setDelay(11, 5);
    }
  });
});

describe('a revalidation storm under load', () => {
  let api;
  let origin;
  let cdn;
  before(async () => {
    api = await startShopApi();
    // A CDN's purge API on loopback that answers every purge.
    cdn = await serveOnLoopback((_, res) => res.end('{}'));
    origin = await startOrigin({
      env: {
        TEST_DATA_API: api.url,
        REVALIDATE_TOKEN: TOKEN,
        CDN_PURGE_URL: `${cdn.url}/purge/{mode}/{groups}`,
      },
    });
  });
  after(async () => {
    await origin?.stop();
    await cdn?.close();
    await api?.close();
  });

  it('a thousand groups a second: each hard revalidation among them still takes effect at once, every call answered', async () => {
    const path = at('/data/30');
    await request(origin.url, path);
    const load = http1Load({
      url: origin.url,
      paths: Array.from({ length: 20 }, (_, i) => at(`/data/${40 + (i % 5)}`)),
      amount: 3000,
      connections: 6,
    });
    let stormed = 0;
    let storming = true;
    const storm = (async () => {
      const calls = [];
      // Ten calls of ten groups every 100 ms for 1.5 s, none awaited before the next: a CMS's
      // bulk publish, a thousand groups a second.
      for (let tick = 0; tick < 15; tick++) {
        for (let call = 0; call < 10; call++) {
          const groups = Array.from({ length: 10 }, () => `storm-${stormed++}`);
          calls.push(revalidate(origin, { groups, mode: tick % 2 ? 'soft' : 'hard' }));
        }
        await sleep(100);
      }
      storming = false;
      return Promise.all(calls);
    })();
    let checked = 0;
    for (let price = 101; storming || checked < 10; price++, checked++) {
      api.setPrice(30, price);
      await revalidate(origin, { groups: ['api:item-30', `storm-x-${price}`], mode: 'hard' });
      const page = await request(origin.url, path);
      assert.equal(priceOf(page), String(price), page.headers['cache-status']);
    }
    const reports = await storm;
    assert.ok(stormed >= 1000, `${stormed} groups revalidated`);
    assert.ok(
      reports.every((report) => report.cdn.ok),
      'every purge went out',
    );
    const done = await load;
    assert.equal(done.failed + done.errors + done.timeouts, 0, JSON.stringify(done));
  });
});

describe('revalidation by path reaches the data, whichever process made the page (Redis)', () => {
  let api;
  let redis;
  const origins = [];
  before(async () => {
    api = await startShopApi();
    redis = await startRedis();
    for (let i = 0; i < 2; i++) {
      origins.push(
        await startOrigin({
          env: { TEST_DATA_API: api.url, REDIS_URL: redis.url, REVALIDATE_TOKEN: TOKEN },
        }),
      );
    }
  });
  after(async () => {
    await Promise.all(origins.map((origin) => origin.stop()));
    await redis?.stop();
    await api?.close();
  });

  for (const mode of ['soft', 'hard']) {
    it(`${mode}: asked of the process that never rendered the page`, async () => {
      const id = mode === 'soft' ? 21 : 22;
      const path = at(`/data/${id}`);
      const stored = await sharedStores(origins[0]);
      await request(origins[0].url, path);
      // The page goes to Redis after its answer: a revalidation that comes first finds nothing
      // to reach there (a clean-clone CI run asked in between: dataOfPaths 0).
      await waitFor(async () => (await sharedStores(origins[0])) > stored, {
        what: `${path} stored in Redis`,
        timeoutMs: 5000,
      });
      api.setPrice(id, 50);
      const heard = await revalidationsHeard(origins[0]);
      const report = await revalidate(origins[1], { paths: [path], mode });
      assert.equal(report.dataOfPaths, 2, JSON.stringify(report));
      const redisChannel = report.channels.find(({ name }) => name === 'redis');
      assert.equal(redisChannel.processes, origins.length, JSON.stringify(report.channels));
      // The report waits a second for the others to apply it before the CDN is purged; on a
      // loaded machine one may say so later (the CDN is purged again): wait for it here.
      await waitFor(async () => (await revalidationsHeard(origins[0])) > heard, {
        what: 'the revalidation applied by the process that made the page',
        timeoutMs: 10_000,
      });
      for (const origin of origins) {
        await untilPrice(origin, path, 50);
      }
    });
  }
});
