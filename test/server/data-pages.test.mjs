// Pages made of data, through the origin and its renders, for the engine of this run: test/app's
// `data/:id` asks an API on loopback (TEST_DATA_API) for the catalog every page shares
// (`public, max-age=60`, tagged `catalog`) and for its item (`max-age=30` with an ETag, tagged
// `item-<id>`); `data-private/:id` asks for the visitor's own (`private`). The API counts what
// reaches it. What the data cache does on its own: data-cache.test.mjs.
import assert from 'node:assert/strict';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { at, health, request, startOrigin } from '../helpers/origin.mjs';

const TOKEN = 'data-pages-test-token-0123456789';

async function startApi() {
  const seen = [];
  const state = { down: false, delayMs: 40 };
  const api = await serveOnLoopback(async (req, res) => {
    seen.push(req.url);
    await sleep(state.delayMs);
    if (state.down) {
      res.writeHead(503, { 'retry-after': '1' }).end();
      return;
    }
    const json = (headers, body) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/catalog') {
      json(
        { 'cache-control': 'public, max-age=60, stale-if-error=600', 'cache-tag': 'catalog' },
        { name: `catalog ${seen.filter((u) => u === '/catalog').length}` },
      );
    } else if (req.url === '/me') {
      json({ 'cache-control': 'private, max-age=60' }, { title: 'your own' });
    } else {
      const id = req.url.split('/').pop();
      if (req.headers['if-none-match'] === `"item-${id}"`) {
        res.writeHead(304, { etag: `"item-${id}"`, 'cache-control': 'max-age=30' }).end();
        return;
      }
      json(
        { 'cache-control': 'max-age=30', etag: `"item-${id}"`, 'cache-tag': `item-${id}` },
        { id, title: `item ${id}` },
      );
    }
  });
  return { ...api, seen, state, count: (path) => seen.filter((u) => u === path).length };
}

const revalidate = (origin, body) =>
  request(origin.url, '/_origin/revalidate', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('pages made of data', () => {
  let api;
  let origin;
  before(async () => {
    api = await startApi();
    origin = await startOrigin({
      env: {
        TEST_DATA_API: api.url,
        REVALIDATE_TOKEN: TOKEN,
        RENDER_CACHE_BYTES: '0',
        METRICS_PORT: '0',
        METRICS_HOST: '127.0.0.1',
      },
    });
  });
  after(async () => {
    await origin?.stop();
    await api?.close();
  });

  it('20 pages rendered at once ask the API for the catalog they share once', async () => {
    const pages = await Promise.all(
      Array.from({ length: 20 }, (_, i) => request(origin.url, at(`/data/${100 + i}`))),
    );
    for (const [i, page] of pages.entries()) {
      assert.equal(page.status, 200);
      assert.match(page.text, /<p class="catalog">catalog 1<\/p>/);
      assert.match(page.text, new RegExp(`<p class="item">item ${100 + i}</p>`));
    }
    assert.equal(api.count('/catalog'), 1);
    // The same page again: its data is fresh by the API's own Cache-Control.
    const before = api.seen.length;
    await request(origin.url, at('/data/100'));
    assert.equal(api.seen.length, before, 'nothing asked of the API');
  });

  it("a page carries its data's groups and is never fresher than its data", async () => {
    const page = await request(origin.url, at('/data/7'));
    const groups = page.headers['cache-groups'];
    for (const group of ['"catalog"', '"api:catalog"', '"api:item-7"']) {
      assert.ok(groups.includes(group), `${group} in ${groups}`);
    }
    // The route says s-maxage=60; its item is fresh for 30 seconds at most.
    const sMaxage = Number(/s-maxage=(\d+)/.exec(page.headers['cache-control'])[1]);
    assert.ok(sMaxage <= 30, page.headers['cache-control']);
  });

  it('revalidating a group of the data drops the data, and the next render asks the API again', async () => {
    await request(origin.url, at('/data/8'));
    const asked = api.count('/catalog');
    const report = JSON.parse((await revalidate(origin, { groups: ['api:catalog'] })).text);
    assert.ok(report.affected >= 1, JSON.stringify(report));
    await request(origin.url, at('/data/8'));
    assert.equal(api.count('/catalog'), asked + 1);
  });

  it('a page made of private data goes out private', async () => {
    const page = await request(origin.url, at('/data-private/1'));
    assert.match(page.text, /your own/);
    assert.match(page.headers['cache-control'], /^private/);
  });

  it('an API down: the stale catalog answers as stale-if-error allows', async () => {
    await request(origin.url, at('/data/9'));
    api.state.down = true;
    try {
      // Hard-revalidate nothing; make the catalog stale by asking with no-cache is not a render's
      // to do: wait for it instead would take a minute, so drop the item only (its group).
      await revalidate(origin, { groups: ['api:item-9'], mode: 'hard' });
      const page = await request(origin.url, at('/data/9'));
      assert.equal(page.status, 200);
      assert.match(page.text, /<p class="catalog">catalog \d<\/p>/, 'the catalog from the cache');
      assert.match(page.text, /data unavailable/, 'the item asked of the API, which is down');
      // Made without part of its data: kept by no cache, so the next visitor gets a new render.
      assert.equal(page.headers['cache-control'], 'no-store');
    } finally {
      api.state.down = false;
    }
  });

  it('counts what reached the API and what the cache answered, by host, in /healthz and the metrics', async () => {
    const { dataCache } = await health(origin);
    const host = new URL(api.url).host;
    const counted = dataCache.byHost[host];
    assert.ok(
      counted.hit > 0 && counted.coalesced > 0 && counted.miss > 0,
      JSON.stringify(counted),
    );
    const metricsUrl = /Metrics on (http:\/\/[^\s"]+)\/metrics/.exec(origin.stdout())[1];
    const text = (await request(metricsUrl, '/metrics')).text;
    const count = (name, labels) =>
      Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    assert.ok(count('origin_data_fetches_total', `host="${host}",outcome="coalesced"`) > 0);
    assert.ok(count('origin_data_upstream_duration_seconds_count', `host="${host}"`) > 0);
    assert.match(text, /^origin_data_cache_entries [1-9]/m);
  });
});

describe('pages made of data, in two processes sharing Redis', () => {
  let api;
  let redis;
  const origins = [];
  before(async () => {
    api = await startApi();
    api.state.delayMs = 80;
    redis = await startRedis();
    for (let i = 0; i < 2; i++) {
      origins.push(
        await startOrigin({
          env: { TEST_DATA_API: api.url, REDIS_URL: redis.url, RENDER_CACHE_BYTES: '0' },
        }),
      );
    }
  });
  after(async () => {
    await Promise.all(origins.map((origin) => origin.stop()));
    await redis?.stop();
    await api?.close();
  });

  it('the catalog one process fetched answers the other', async () => {
    await request(origins[0].url, at('/data/1'));
    const asked = api.count('/catalog');
    const other = await request(origins[1].url, at('/data/2'));
    assert.match(other.text, /<p class="catalog">catalog 1<\/p>/);
    assert.equal(api.count('/catalog'), asked, 'the other process asked Redis, not the API');
  });
});
