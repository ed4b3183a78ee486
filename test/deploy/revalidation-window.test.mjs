// After a price change and one revalidation call, how long visitors still see the old price: two
// replicas of the origin (the tests' app) sharing Redis, behind the shipped Varnish
// (deploy/varnish/default.vcl, both replicas in its director), its purge hook pointed at Varnish. The
// page (test/app's `data/:id`, `s-maxage=60, stale-while-revalidate=600`) is made of an API's item
// (`public, max-age=60`, an ETag per price, answering in 50 ms). Visitors ask at 20 requests a second
// per URL through Varnish and at each replica directly; every answer is timed from when it was
// asked. The targets (issue 54): hard, no answer asked 1 s or more after the revalidation's 200
// carries the old price; soft, none 2 s after; with no traffic, at most one old answer per copy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { startReplicas } from '../../scripts/lib/rolling-deploy.mjs';
import { inputsVclOf } from '../../scripts/lib/varnish.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { at, DIST, request } from '../helpers/origin.mjs';

const TOKEN = 'revalidation-window-token-0123456789';
/** Requests a second per URL, per way in (Varnish, each replica). */
const RATE = 20;
const TARGET_MS = { hard: 1000, soft: 2000 };

async function startShopApi() {
  const prices = new Map();
  const api = await serveOnLoopback(async (req, res) => {
    const id = req.url.split('/').pop();
    const price = prices.get(id) ?? 10;
    const etag = `"${req.url}-${price}"`;
    await sleep(50);
    const headers = {
      'cache-control': 'public, max-age=60',
      etag,
      'cache-tag': req.url === '/catalog' ? 'catalog' : `item-${id}`,
    };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return;
    }
    const body =
      req.url === '/catalog' ? { name: 'catalog' } : { id, title: `item ${id} at ${price}` };
    res.writeHead(200, { ...headers, 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return { ...api, setPrice: (id, price) => prices.set(String(id), price) };
}

const priceOf = (text) => /<p class="item">item \d+ at (\d+)<\/p>/.exec(text)?.[1];

/**
 * Asks `path` of each of `ways` at RATE a second each until `signal` aborts, recording when each
 * request was asked (ms, performance.now()) and the price it got.
 */
function visit(ways, path, signal) {
  const answers = [];
  const pending = [];
  const timers = ways.map(([way, url]) =>
    setInterval(() => {
      const asked = performance.now();
      pending.push(
        request(url, path).then(
          (page) => answers.push({ way, asked, price: priceOf(page.text), status: page.status }),
          (error) => answers.push({ way, asked, error: String(error) }),
        ),
      );
    }, 1000 / RATE),
  );
  return new Promise((resolve) =>
    signal.addEventListener('abort', async () => {
      timers.forEach(clearInterval);
      await Promise.all(pending);
      resolve(answers);
    }),
  );
}

describe('after a revalidation, visitors see the new price: two replicas, Redis, Varnish', () => {
  let api;
  let redis;
  let fleet;
  let next = 500;
  before(async () => {
    api = await startShopApi();
    redis = await startRedis();
    fleet = await startReplicas({
      dist: DIST,
      inputsVcl: await inputsVclOf(DIST),
      env: (varnishUrl) => ({
        TEST_DATA_API: api.url,
        REDIS_URL: redis.url,
        REVALIDATE_TOKEN: TOKEN,
        CACHE_GROUP_ALIASES: 'xkey',
        CDN_PURGE_URL: `${varnishUrl}/.origin/purge/{mode}/{groups}`,
        CDN_PURGE_METHOD: 'PURGE',
      }),
    });
  });
  after(async () => {
    await fleet?.stop();
    await redis?.stop();
    await api?.close();
  });

  const ways = () => [
    ['varnish', fleet.varnish.url],
    ...fleet.serving.map(({ origin }, i) => [`replica ${i + 1}`, origin.url]),
  ];

  /** The page cached everywhere: in Varnish, and in each replica (memory and Redis). */
  async function warm(path) {
    for (const [, url] of ways()) {
      await request(url, path);
      await request(url, path);
    }
  }

  async function revalidate(body) {
    const answer = await request(fleet.serving[0].origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 200, answer.text);
    const report = JSON.parse(answer.text);
    assert.equal(report.cdn.ok, true, JSON.stringify(report.cdn));
    return report;
  }

  for (const mode of ['hard', 'soft']) {
    for (const by of ['group', 'path']) {
      it(`${mode}, by ${by}: no answer asked ${TARGET_MS[mode]} ms after the 200 has the old price`, async (t) => {
        const id = next++;
        const path = at(`/data/${id}`);
        await warm(path);
        const stop = new AbortController();
        const visits = visit(ways(), path, stop.signal);
        await sleep(1000);
        api.setPrice(id, 99);
        await revalidate(
          by === 'group' ? { groups: [`api:item-${id}`], mode } : { paths: [path], mode },
        );
        const done = performance.now();
        await sleep(TARGET_MS[mode] + 1500);
        stop.abort();
        const answers = await visits;
        const failed = answers.filter((answer) => answer.error || answer.status !== 200);
        assert.deepEqual(failed, [], 'every visit answered 200');
        const old = answers.filter((answer) => answer.price === '10');
        const lastOld = Math.max(-Infinity, ...old.map((answer) => answer.asked - done));
        const byWay = Object.fromEntries(
          ways().map(([way]) => {
            const its = old.filter((answer) => answer.way === way && answer.asked >= done);
            return [way, its.length];
          }),
        );
        t.diagnostic(
          `${answers.length} answers; old price last asked ${lastOld.toFixed(0)} ms after the 200; old answers asked after it: ${JSON.stringify(byWay)}`,
        );
        assert.ok(
          lastOld < TARGET_MS[mode],
          `an old price asked ${lastOld.toFixed(0)} ms after the revalidation's 200`,
        );
        assert.ok(
          answers.some((answer) => answer.price === '99' && answer.way === 'varnish'),
          'the new price reached Varnish',
        );
      });
    }
  }

  it('soft, with no traffic: at most one old answer per cache copy', async () => {
    const id = next++;
    const path = at(`/data/${id}`);
    await warm(path);
    api.setPrice(id, 77);
    await revalidate({ groups: [`api:item-${id}`] });
    for (const [way, url] of ways()) {
      const prices = [];
      for (let i = 0; i < 4; i++) {
        prices.push(priceOf((await request(url, path)).text));
        await sleep(300);
      }
      assert.ok(
        prices.filter((price) => price === '10').length <= 1,
        `${way}: ${prices.join(', ')}`,
      );
      assert.equal(prices.at(-1), '77', `${way}: ${prices.join(', ')}`);
    }
  });
});
