// The observers of every request (server/observe/: subscribers of server/channels.ts): the access log, Server-Timing and
// the metrics' response times see requests the fast path answers as they see Koa's, over HTTP/1.1
// and HTTP/2, whichever step wrote the answer; with none configured, answers carry nothing of them.
import assert from 'node:assert/strict';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { logLines, request, startOrigin } from '../helpers/origin.mjs';
import { METRICS_ON, metricsUrl, scrape, scrapeUntil, total } from '../helpers/metrics.mjs';

/** Server-Timing as a map of metric name to its parameters. */
function timings(header) {
  const metrics = new Map();
  for (const metric of String(header ?? '')
    .split(/,\s*/)
    .filter(Boolean)) {
    const [name, ...params] = metric.split(';');
    metrics.set(
      name.trim(),
      Object.fromEntries(
        params.map((param) => {
          const [key, value] = param.split('=');
          return [key.trim(), value.replace(/^"|"$/g, '')];
        }),
      ),
    );
  }
  return metrics;
}

/** An API for the data page: 40 ms per answer. */
function startApi() {
  return serveOnLoopback(async (req, res) => {
    await sleep(40);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=30' });
    res.end(JSON.stringify({ name: 'catalog', id: '1', title: 'item' }));
  });
}

for (const protocol of ['http/1.1', 'h2']) {
  describe(`request observers (${protocol})`, () => {
    let origin;
    let api;
    before(async () => {
      api = await startApi();
      origin = await startOrigin({
        protocol,
        env: { ACCESS_LOG: 'true', SERVER_TIMING: 'true', TEST_DATA_API: api.url, ...METRICS_ON },
      });
    });
    after(async () => {
      await origin?.stop();
      await api?.close();
    });

    it('Server-Timing on every kind of answer: rendered, cached, a file, a 304, a redirect, a 404, JSON', async () => {
      const miss = await request(origin.url, '/data/1');
      const page = timings(miss.headers['server-timing']);
      assert.equal(page.get('cache')?.desc, 'miss');
      for (const name of ['queue', 'render', 'data', 'total']) {
        assert.ok(Number(page.get(name)?.dur) >= 0, `${name} in ${miss.headers['server-timing']}`);
      }
      // The render waited on its API (40 ms a call), and the whole on the render.
      assert.ok(Number(page.get('data').dur) >= 35, miss.headers['server-timing']);
      assert.equal(page.get('data').desc, 'miss 2');
      assert.ok(Number(page.get('render').dur) >= Number(page.get('data').dur));
      assert.ok(Number(page.get('total').dur) >= Number(page.get('render').dur));

      const hit = timings((await request(origin.url, '/data/1')).headers['server-timing']);
      assert.equal(hit.get('cache')?.desc, 'hit');
      assert.equal(hit.has('render'), false);
      assert.ok(hit.has('total'));

      const file = await request(origin.url, '/favicon.ico');
      assert.ok(timings(file.headers['server-timing']).has('total'));
      const notModified = await request(origin.url, '/favicon.ico', {
        headers: { 'if-none-match': file.headers.etag },
      });
      assert.equal(notModified.status, 304);
      assert.ok(timings(notModified.headers['server-timing']).has('total'));
      for (const [path, status] of [
        ['/products//5', 308],
        ['/nothing-here-123.js', 404],
        ['/healthz', 200],
      ]) {
        const res = await request(origin.url, path);
        assert.equal(res.status, status, path);
        assert.ok(
          timings(res.headers['server-timing']).has('total'),
          `${path}: ${res.headers['server-timing']}`,
        );
      }
    });

    it('one access log line per request, on either entrance, with its route and how it was answered', async () => {
      await request(origin.url, '/products/21');
      await request(origin.url, '/products/21');
      await request(origin.url, '/favicon.ico?for=log');
      await sleep(50);
      const lines = logLines(origin)
        .filter((line) => ['/products/21', '/favicon.ico?for=log'].includes(line.url))
        .map(({ method, url, status, route, answer, cache }) => ({
          method,
          url,
          status,
          route,
          answer,
          cache,
        }));
      assert.deepEqual(lines, [
        {
          method: 'GET',
          url: '/products/21',
          status: 200,
          route: '/products/:id',
          answer: 'koa',
          cache: 'miss',
        },
        {
          method: 'GET',
          url: '/products/21',
          status: 200,
          route: '/products/:id',
          answer: 'fast-path',
          cache: 'hit',
        },
        {
          method: 'GET',
          url: '/favicon.ico?for=log',
          status: 200,
          route: '/{file}',
          // A query string: past the fast path, to Koa's files.
          answer: 'koa',
          cache: undefined,
        },
      ]);
    });

    it('the response-time histogram counts fast-path answers (the access log no longer turns the fast path off)', async () => {
      const url = await metricsUrl(origin);
      const count = (metrics) =>
        total(metrics, 'origin_response_duration_seconds_count', { answer: 'fast-path' });
      const was = count((await scrape(url)).metrics);
      await request(origin.url, '/favicon.ico');
      const metrics = await scrapeUntil(url, (now) => count(now) > was);
      assert.equal(count(metrics), was + 1);
    });
  });
}

describe('with no observer', () => {
  it('answers carry no Server-Timing', async () => {
    const origin = await startOrigin();
    try {
      for (const path of ['/products/3', '/products/3', '/favicon.ico', '/products//3']) {
        const res = await request(origin.url, path);
        assert.equal(res.headers['server-timing'], undefined, path);
      }
    } finally {
      await origin.stop();
    }
  });
});
