// Traces, as a team's backend would get them: the origin exports over OTLP/HTTP to a real
// OpenTelemetry Collector (scripts/lib/otel-collector.mjs: built by npm run setup:test), and these
// tests read the spans the collector wrote. A page made of data asks an API on loopback, which
// records the traceparent each request brings.
import assert from 'node:assert/strict';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { createServer as createTcpServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { startCollector } from '../../scripts/lib/otel-collector.mjs';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import {
  ENGINE,
  health,
  logLine,
  logLines,
  rendersIdle,
  request,
  runOriginExpectingExit,
  startOrigin,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const TOKEN = 'tracing-test-token-0123456789abcdef';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/** An API for the data pages: slow enough for renders to overlap, recording each traceparent. */
async function startApi() {
  const seen = [];
  const api = await serveOnLoopback(async (req, res) => {
    seen.push({ url: req.url, traceparent: req.headers['traceparent'] });
    await sleep(60);
    const id = req.url.split('/').pop();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=30' });
    res.end(JSON.stringify(req.url === '/catalog' ? { name: 'catalog' } : { id, title: id }));
  });
  return { ...api, seen };
}

/** Polls the collector (up to 10 s) until `find` returns something. */
function collected(collector, find, what) {
  return waitFor(() => find(collector.spans()), {
    what,
    timeoutMs: 10_000,
    everyMs: 50,
    seen: () =>
      `the collector has: ${collector
        .spans()
        .map((span) => `${span.name} ${span.attributes['url.path'] ?? ''}`)
        .join(', ')}`,
  });
}

/** The SERVER span of the request for `path` (its url.path), optionally the n-th. */
const serverSpans = (spans, path) =>
  spans.filter((span) => span.kind === SERVER && span.attributes['url.path'] === path);

const traceOf = (spans, traceId) => spans.filter((span) => span.traceId === traceId);
const childrenOf = (spans, parent) => spans.filter((span) => span.parentSpanId === parent.spanId);

describe('traces', () => {
  let collector;
  let api;
  let origin;
  const env = (extra = {}) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: 'origin-under-test',
    TEST_DATA_API: api.url,
    ACCESS_LOG: 'true',
    ...extra,
  });
  before(async () => {
    [collector, api] = await Promise.all([startCollector(), startApi()]);
    origin = await startOrigin({
      env: env({ REVALIDATE_TOKEN: TOKEN, CDN_PURGE_URL: `${api.url}/purge{path}` }),
    });
  });
  after(async () => {
    await Promise.all([origin?.stop(), collector?.stop(), api?.close()]);
  });

  it('a miss: the request, its cache lookup, the fill, the wait and the render, a CLIENT span per fetch, and the traceparent at the API', async () => {
    const res = await request(origin.url, '/data/7');
    assert.equal(res.status, 200);
    const server = await collected(collector, (spans) => serverSpans(spans, '/data/7')[0], 'span');
    assert.equal(server.name, 'GET /data/:id');
    assert.equal(server.parentSpanId, undefined);
    assert.equal(server.resource['service.name'], 'origin-under-test');
    assert.deepEqual(
      {
        status: server.attributes['http.response.status_code'],
        route: server.attributes['http.route'],
        mode: server.attributes['origin.render_mode'],
        cache: server.attributes['origin.cache'],
        answer: server.attributes['origin.answer'],
        engine: server.attributes['origin.engine'],
      },
      {
        status: '200',
        route: '/data/:id',
        mode: 'server',
        cache: 'miss',
        answer: 'koa',
        engine: ENGINE,
      },
    );
    // The whole trace has arrived once its CLIENT spans have.
    const spans = await collected(
      collector,
      (all) => {
        const trace = traceOf(all, server.traceId);
        return trace.filter((span) => span.kind === CLIENT).length === 2 && trace;
      },
      'CLIENT spans',
    );
    const [fill] = childrenOf(spans, server).filter((span) => span.name === 'render cache fill');
    assert.ok(fill, 'a fill under the request');
    assert.ok(
      childrenOf(spans, server).some((span) => span.name === 'render cache memory'),
      'the lookup in memory under the request',
    );
    const underFill = childrenOf(spans, fill).map((span) => span.name);
    assert.ok(underFill.includes('render queue'), underFill.join());
    const render = childrenOf(spans, fill).find((span) => span.name === 'render /data/:id');
    assert.ok(render, `a render under the fill: ${underFill.join()}`);
    const fetches = childrenOf(spans, render).filter((span) => span.kind === CLIENT);
    assert.equal(fetches.length, 2, 'both fetches under the render');
    for (const fetch of fetches) {
      assert.equal(fetch.name, `GET ${new URL(api.url).host}`);
      assert.equal(fetch.attributes['origin.data.outcome'], 'miss');
      assert.equal(fetch.attributes['http.response.status_code'], '200');
      const path = new URL(fetch.attributes['url.full']).pathname;
      // The API saw this span as its parent: the trace goes on there.
      assert.ok(
        api.seen.some(
          ({ url, traceparent }) =>
            url === path && traceparent === `00-${fetch.traceId}-${fetch.spanId}-01`,
        ),
        `the API got ${path} with this span's traceparent: ${JSON.stringify(api.seen)}`,
      );
    }
    // Its access log line names the trace and the request's span.
    const line = await logLine(origin, (l) => l.msg === 'request' && l.url === '/data/7');
    assert.equal(line.trace_id, server.traceId);
    assert.equal(line.span_id, server.spanId);
    assert.equal(line.route, '/data/:id');
  });

  it('every request is named by its route or what it is, never by its URL: the fast path, a prerendered page, files, redirects, refusals', async () => {
    await request(origin.url, '/products/40');
    const asked = [
      ['/products/40', {}, 200, 'GET /products/:id'],
      ['/', {}, 200, 'GET /'],
      ['/favicon.ico', {}, 200, 'GET /{file}'],
      ['/missing-chunk-ABC123.js', {}, 404, 'GET /{file}'],
      ['/products//41', {}, 308, 'GET /products/:id'],
      ['/products/42', { method: 'POST' }, 405, 'POST /products/:id'],
      ['/products/43', { headers: { host: 'evil.example' } }, 400, 'GET'],
      ['/healthz', {}, 200, 'GET /healthz'],
    ];
    for (const [path, options, status] of asked) {
      assert.equal((await request(origin.url, path, options)).status, status, path);
    }
    for (const [path, , status, name] of asked) {
      const spans = await collected(
        collector,
        (all) => serverSpans(all, path).length === (path === '/products/40' ? 2 : 1) && all,
        `span of ${path}`,
      );
      const span = serverSpans(spans, path).at(-1);
      assert.equal(span.name, name, path);
      assert.equal(span.attributes['http.response.status_code'], String(status), path);
    }
    const [hit] = serverSpans(collector.spans(), '/products/40').slice(-1);
    assert.equal(hit.attributes['origin.answer'], 'fast-path');
    assert.equal(hit.attributes['origin.cache'], 'hit');
    assert.equal(
      serverSpans(collector.spans(), '/')[0].attributes['origin.render_mode'],
      'prerendered',
    );
    const refused = serverSpans(collector.spans(), '/products/43')[0];
    assert.equal(refused.attributes['http.route'], undefined);
    assert.equal(refused.attributes['origin.error.code'], 'ORIGIN_HOST_REJECTED');
  });

  it('a render several requests wait on is linked to each of them', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => request(origin.url, '/data/88')),
    );
    assert.deepEqual(new Set(responses.map((res) => res.status)), new Set([200]));
    const spans = await collected(
      collector,
      (all) => {
        const requests = serverSpans(all, '/data/88');
        const renders = all.filter((span) => span.name === 'render /data/:id');
        return requests.length === 6 && renders.some((r) => r.links.length > 0) && all;
      },
      'six requests and a linked render',
    );
    const requests = serverSpans(spans, '/data/88');
    const render = spans.find(
      (span) =>
        span.name === 'render /data/:id' && requests.some((r) => r.traceId === span.traceId),
    );
    const linked = new Set(render.links.map((link) => link.spanId));
    const waiters = requests.filter((r) => r.attributes['origin.cache'] === 'coalesced');
    assert.ok(waiters.length >= 1, 'some requests waited on the render');
    for (const waiter of waiters) {
      assert.ok(linked.has(waiter.spanId), `the render links to waiter ${waiter.spanId}`);
    }
  });

  it('a stale page is refreshed in a trace of its own, linked to the request that found it stale', async () => {
    await request(origin.url, '/products/60');
    const revalidated = await request(origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: ['/products/60'], mode: 'soft' }),
    });
    assert.equal(revalidated.status, 200);
    const stale = await request(origin.url, '/products/60');
    assert.match(String(stale.headers['cache-status']), /hit/);
    await rendersIdle(origin);
    const spans = await collected(
      collector,
      (all) => all.some((span) => span.name === 'render cache refresh') && all,
      'a refresh',
    );
    const asker = serverSpans(spans, '/products/60').at(-1);
    const refresh = spans.find((span) => span.name === 'render cache refresh');
    assert.equal(refresh.parentSpanId, undefined, 'a trace of its own');
    assert.notEqual(refresh.traceId, asker.traceId);
    assert.deepEqual(refresh.links, [{ traceId: asker.traceId, spanId: asker.spanId }]);
    const render = await collected(
      collector,
      (all) =>
        all.find(
          (span) => span.traceId === refresh.traceId && span.name === 'render /products/:id',
        ),
      'the refresh render',
    );
    assert.equal(render.attributes['origin.render.background'], true);
    // The revalidation itself is a span of its request's trace.
    const revalidation = serverSpans(spans, '/_origin/revalidate')[0];
    assert.ok(
      spans.some((span) => span.name === 'revalidate' && span.parentSpanId === revalidation.spanId),
    );
  });

  it('a fetch the data cache does not own (the CDN purge) is a CLIENT span, its traceparent at the API', async () => {
    const revalidated = await request(origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: ['/products/61'] }),
    });
    assert.equal(revalidated.status, 200);
    const purgeOf = (span) =>
      span.kind === CLIENT && span.attributes['url.full']?.endsWith('/purge/products/61');
    const spans = await collected(collector, (all) => all.some(purgeOf) && all, 'the purge span');
    const purge = spans.find(purgeOf);
    assert.equal(purge.name, `POST ${new URL(api.url).host}`);
    assert.equal(purge.attributes['http.response.status_code'], '200');
    // Under the revalidation, under its request.
    const revalidate = spans.find((span) => span.spanId === purge.parentSpanId);
    assert.equal(revalidate?.name, 'revalidate');
    const asked = spans.find((span) => span.spanId === revalidate.parentSpanId);
    assert.equal(asked?.attributes['url.path'], '/_origin/revalidate');
    assert.ok(
      api.seen.some(
        ({ url, traceparent }) =>
          url === '/purge/products/61' && traceparent === `00-${purge.traceId}-${purge.spanId}-01`,
      ),
      `the purge went out with its span's traceparent: ${JSON.stringify(api.seen)}`,
    );
  });

  it('a failed render is recorded on its span, and the lines it logs carry its trace', async () => {
    // CommonEngine renders around the error Angular's ErrorHandler took (200, the render span in
    // error); Angular's engine renders no page (500, the request span in error): faults.test.mjs.
    const res = await request(origin.url, '/throws');
    const server = await collected(collector, (spans) => serverSpans(spans, '/throws')[0], 'span');
    if (ENGINE === 'common') {
      assert.equal(res.status, 200);
      const render = await collected(
        collector,
        (spans) => spans.find((s) => s.traceId === server.traceId && s.name === 'render /throws'),
        'the render span',
      );
      assert.equal(render.status.code, ERROR);
      const line = logLines(origin).find((l) => l.code === 'ORIGIN_RENDER_CONSOLE');
      assert.equal(line.trace_id, server.traceId, 'the warning is joined to the trace');
    } else {
      assert.equal(res.status, 500);
      assert.equal(server.status.code, ERROR);
      // The navigation failed: Angular's engine rendered no page.
      assert.equal(server.attributes['origin.error.code'], 'ORIGIN_RENDER_NO_PAGE');
      assert.equal(server.attributes['error.type'], 'ORIGIN_RENDER_NO_PAGE');
      assert.ok(server.events.includes('exception'));
      const line = await logLine(origin, (l) => l.msg === 'request failed' && l.url === '/throws');
      assert.equal(line.trace_id, server.traceId, 'the error line is joined to the trace');
      assert.equal(line.span_id, server.spanId);
    }
  });

  it('an incoming traceparent: continued; its sampled flag obeyed only when trusted; or only linked', async () => {
    const parent = (flags) => `00-${'4bf92f3577b34da6a3ce929d0e0e4736'}-00f067aa0ba902b7-${flags}`;
    // Ratio 0: this origin records nothing of its own accord.
    const [continued, obeyed, ignored] = await Promise.all(
      ['continue', 'obey', 'ignore'].map((trust) =>
        startOrigin({
          env: env({
            TRACEPARENT: trust,
            OTEL_TRACES_SAMPLER: trust === 'ignore' ? 'always_on' : 'parentbased_traceidratio',
            OTEL_TRACES_SAMPLER_ARG: trust === 'ignore' ? '' : '0',
          }),
        }),
      ),
    );
    try {
      await request(continued.url, '/products/70', { headers: { traceparent: parent('01') } });
      await request(obeyed.url, '/products/71', { headers: { traceparent: parent('01') } });
      await request(ignored.url, '/products/72', { headers: { traceparent: parent('01') } });
      const own = await collected(
        collector,
        (spans) => serverSpans(spans, '/products/71')[0],
        'span',
      );
      assert.equal(own.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
      assert.equal(own.parentSpanId, '00f067aa0ba902b7');
      const linked = await collected(
        collector,
        (spans) => serverSpans(spans, '/products/72')[0],
        'span',
      );
      assert.notEqual(linked.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
      assert.equal(linked.parentSpanId, undefined);
      assert.deepEqual(linked.links, [
        { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' },
      ]);
      // A visitor's sampled flag cannot have a request recorded that this origin would not record.
      const line = await logLine(continued, (l) => l.msg === 'request' && l.url === '/products/70');
      assert.equal(line.trace_id, undefined);
      assert.equal(serverSpans(collector.spans(), '/products/70').length, 0);
    } finally {
      await Promise.all([continued.stop(), obeyed.stop(), ignored.stop()]);
    }
  });

  it('sampling one in two: decided on the trace id the spans carry; a request left out records nothing, its fetches carry its unsampled trace, its refresh is decided on its own', async () => {
    const sampled = await startOrigin({
      env: env({
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.5',
        TRACEPARENT: 'obey',
        REVALIDATE_TOKEN: TOKEN,
      }),
    });
    // TraceIdRatioBasedSampler's rule (@opentelemetry/sdk-trace): the trace id's 32-bit words
    // XOR-ed, under the ratio's share of 2^32 - 1.
    const picked = (traceId) => {
      let words = 0;
      for (let i = 0; i < 32; i += 8) words = (words ^ parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
      return words < Math.floor(0.5 * 0xffffffff);
    };
    const traceparentOf = (path) => {
      const seen = api.seen.filter(({ url }) => url === `/items/${path.split('/').pop()}`);
      assert.equal(seen.length, 1, `one fetch of ${path}'s item`);
      const parsed = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/.exec(seen[0].traceparent ?? '');
      assert.ok(parsed, `a traceparent for ${path}: ${seen[0].traceparent}`);
      return { traceId: parsed[1], sampled: parsed[3] === '01' };
    };
    try {
      const paths = Array.from({ length: 40 }, (_, i) => `/data/${300 + i}`);
      for (const path of paths) {
        assert.equal((await request(sampled.url, path)).status, 200);
      }
      // A remote parent that says "not sampled", obeyed: the trace goes on unsampled.
      const remote = '5ce0a3e1a2b34da6a3ce929d0e0e4799';
      await request(sampled.url, '/data/340', {
        headers: { traceparent: `00-${remote}-00f067aa0ba902b7-00` },
      });
      const told = paths.map((path) => ({ path, ...traceparentOf(path) }));
      assert.deepEqual(traceparentOf('/data/340'), { traceId: remote, sampled: false });
      const recorded = told.filter((one) => one.sampled);
      const left = told.filter((one) => !one.sampled);
      assert.ok(recorded.length > 0 && left.length > 0, `${recorded.length} of 40 recorded`);
      for (const one of told) {
        assert.equal(one.sampled, picked(one.traceId), `${one.path}: decided on ${one.traceId}`);
      }
      assert.equal(new Set(told.map((one) => one.traceId)).size, 40, 'a trace per request');
      // Each one's request span too: it ends after its answer, and may be exported after its fetches'.
      const spans = await collected(
        collector,
        (all) =>
          recorded.every(
            ({ path, traceId }) =>
              traceOf(all, traceId).filter((s) => s.kind === CLIENT).length === 2 &&
              serverSpans(traceOf(all, traceId), path).length > 0,
          ) && all,
        'the recorded requests whole',
      );
      for (const { path, traceId } of recorded) {
        assert.equal(serverSpans(traceOf(spans, traceId), path).length, 1, path);
        assert.ok(traceOf(spans, traceId).some((span) => span.name === 'render /data/:id'));
      }
      for (const { path, traceId } of [...left, { path: '/data/340', traceId: remote }]) {
        assert.deepEqual(traceOf(spans, traceId), [], `nothing of ${path} recorded`);
        assert.deepEqual(serverSpans(spans, path), []);
        const line = await logLine(sampled, (l) => l.msg === 'request' && l.url === path);
        assert.equal(line.trace_id, undefined, `${path}'s log line names no trace`);
      }

      // Refreshes are traces of their own: one that a left-out request found stale is decided
      // anew (recorded with probability 1/2 each: none of 20 or so recorded, about 2^-20).
      const products = Array.from({ length: 40 }, (_, i) => `/products/${400 + i}`);
      for (const path of products) await request(sampled.url, path);
      const revalidated = await request(sampled.url, '/_origin/revalidate', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ paths: products, mode: 'soft' }),
      });
      assert.equal(revalidated.status, 200);
      for (const path of products) {
        assert.match(String((await request(sampled.url, path)).headers['cache-status']), /hit/);
      }
      await rendersIdle(sampled);
      // This origin's: the collector also has what the suite's other origins record.
      const pid = logLines(sampled)[0].pid;
      const refreshes = await collected(
        collector,
        (all) => {
          const found = all.filter(
            (span) =>
              String(span.resource['process.pid']) === String(pid) &&
              span.name === 'render cache refresh' &&
              span.links.length === 1 &&
              !picked(span.links[0].traceId),
          );
          return found.length > 0 && found;
        },
        'a refresh asked for by a request left out',
      );
      for (const refresh of refreshes) {
        assert.equal(refresh.parentSpanId, undefined);
        assert.ok(picked(refresh.traceId), 'decided on its own trace id');
        assert.deepEqual(traceOf(collector.spans(), refresh.links[0].traceId), []);
      }
    } finally {
      await sampled.stop();
    }
  });

  it("a visitor's personal parts: their render's span under the request's, each part's outcome on the request span", async () => {
    const path = '/parts/90?parts=visitor,throws&fail=1';
    await request(origin.url, '/parts/90');
    assert.equal((await request(origin.url, path, { headers: { cookie: 'sid=zoe' } })).status, 200);
    const server = await collected(
      collector,
      (spans) =>
        spans.find(
          (span) =>
            span.kind === SERVER &&
            span.attributes['url.path'] === '/parts/90' &&
            span.attributes['origin.parts'] !== undefined,
        ),
      "the visitor's request span",
    );
    assert.equal(server.name, 'GET /parts/:id');
    // As each part was served: the one that failed first.
    assert.deepEqual(server.attributes['origin.parts'].split(' ').sort(), [
      'throws=failed',
      'visitor=rendered',
    ]);
    const renders = await collected(
      collector,
      (spans) => {
        const found = traceOf(spans, server.traceId).filter((s) =>
          s.name.startsWith('render parts'),
        );
        // Together, then each again alone (the throw failed both).
        return found.length === 3 && found;
      },
      'the parts renders',
    );
    assert.deepEqual(renders.map((span) => span.attributes['origin.parts']).sort(), [
      'throws',
      'visitor',
      'visitor throws',
    ]);
    for (const span of renders) {
      assert.equal(span.name, 'render parts /parts/:id');
    }
    assert.equal(
      renders.filter((span) => span.status.code === ERROR).length,
      2,
      'the renders that held the throwing part',
    );
  });

  it('HTTP/2: the same request span, on either entrance', async () => {
    const h2 = await startOrigin({ protocol: 'h2', env: env() });
    try {
      for (const path of ['/products/80', '/products/80', '/favicon.ico']) {
        assert.equal((await request(h2.url, path)).status, 200);
      }
      const spans = await collected(
        collector,
        (all) =>
          serverSpans(all, '/products/80').length === 2 &&
          serverSpans(all, '/favicon.ico').some((s) => s.attributes['url.scheme'] === 'https') &&
          all,
        'HTTP/2 spans',
      );
      const [miss, hit] = serverSpans(spans, '/products/80');
      for (const span of [miss, hit]) {
        assert.equal(span.name, 'GET /products/:id');
        assert.equal(span.attributes['network.protocol.version'], '2');
        assert.equal(span.attributes['url.scheme'], 'https');
      }
      assert.equal(miss.attributes['origin.answer'], 'koa');
      assert.equal(hit.attributes['origin.answer'], 'fast-path');
    } finally {
      await h2.stop();
    }
  });

  it("the app's own API with TLS_CERT: its request a SERVER span under the render's CLIENT span, though it went to the process's private listener", async () => {
    const h2 = await startOrigin({
      protocol: 'h2',
      env: env({ TEST_DATA_API: 'own', NODE_EXTRA_CA_CERTS: '' }),
    });
    try {
      const res = await request(h2.url, '/data/81');
      assert.equal(res.status, 200);
      assert.match(res.text, /own item 81/);
      // The API's span, its parent (the render's fetch, which ends and is exported after it) and the
      // page's request span, which ends last: each may come in a batch of its own.
      const spans = await collected(
        collector,
        (all) => {
          const [api] = serverSpans(all, '/api/items/81');
          const [page] = serverSpans(all, '/data/81');
          return api && page && all.some((span) => span.spanId === api.parentSpanId) && all;
        },
        "the API request's span, its parent and the page's span",
      );
      const [api] = serverSpans(spans, '/api/items/81');
      assert.equal(api.name, 'GET /api/*');
      const fetch = spans.find((span) => span.spanId === api.parentSpanId);
      assert.ok(fetch, 'the API span has its parent in the trace');
      assert.equal(fetch.kind, CLIENT);
      // Named by API_URL, the origin's own public address: where the request went is the origin's affair.
      assert.equal(fetch.name, `GET 127.0.0.1:${h2.port}`);
      assert.equal(fetch.attributes['url.full'], `${h2.url}/api/items/81`);
      const [page] = serverSpans(spans, '/data/81');
      assert.equal(fetch.traceId, page.traceId, "the API's span is in the page's trace");
    } finally {
      await h2.stop();
    }
  });

  it('Redis calls and the shared tier are spans of the request', async () => {
    const redis = await startRedis();
    const shared = await startOrigin({ env: env({ REDIS_URL: redis.url }) });
    try {
      // Until Redis is connected, the tier is skipped: ask until a lookup went through it.
      await waitFor(async () => (await health(shared)).sharedCache?.state === 'ready', {
        what: 'ready shared tier',
        timeoutMs: 5_000,
        everyMs: 100,
      });
      assert.equal((await request(shared.url, '/products/90')).status, 200);
      const spans = await collected(
        collector,
        (all) => {
          const [server] = serverSpans(all, '/products/90');
          const trace = server && traceOf(all, server.traceId);
          return trace?.some((span) => span.name === 'redis tier.put') && trace;
        },
        'Redis spans',
      );
      const names = spans.map((span) => span.name);
      for (const name of [
        'render cache redis',
        'redis tier.get',
        'redis tier.lock',
        'redis tier.put',
      ]) {
        assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      }
      const get = spans.find((span) => span.name === 'redis tier.get');
      assert.equal(get.kind, CLIENT);
      assert.equal(get.attributes['db.system.name'], 'redis');
      assert.equal(get.attributes['origin.redis.outcome'], 'ok');
      const lookup = spans.find((span) => span.name === 'render cache redis');
      assert.equal(get.parentSpanId, lookup.spanId);
    } finally {
      await shared.stop();
      await redis.stop();
    }
  });

  it('any traceparent and tracestate, valid or not, answer as without them and yield one well-formed trace', async () => {
    const hex = (length) =>
      fc.string({
        unit: fc.constantFrom(...'0123456789abcdef'),
        minLength: length,
        maxLength: length,
      });
    const traceparent = fc.oneof(
      fc
        .tuple(hex(32), hex(16), fc.constantFrom('00', '01', 'ff', '0g'))
        .map(([trace, span, flags]) => `00-${trace}-${span}-${flags}`),
      fc.constantFrom(
        '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
        '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
        'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
        '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
        '',
      ),
      fc.string({ maxLength: 80 }).map((text) => text.replace(/[^\x20-\x7e]/g, '')),
    );
    let n = 0;
    const sent = [];
    await fc.assert(
      fc.asyncProperty(traceparent, fc.string({ maxLength: 40 }), async (parent, state) => {
        const path = `/products/${1000 + n++}`;
        const headers = { traceparent: parent, tracestate: state.replace(/[^\x20-\x7e]/g, '') };
        const res = await request(origin.url, path, { headers });
        assert.equal(res.status, 200);
        sent.push({ path, parent });
      }),
      { numRuns: 40 },
    );
    const spans = await collected(
      collector,
      (all) => sent.every(({ path }) => serverSpans(all, path).length === 1) && all,
      'a span per request',
    );
    for (const { path, parent } of sent) {
      const [span] = serverSpans(spans, path);
      assert.match(span.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(span.traceId, '0'.repeat(32));
      const valid = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(parent);
      const usable = valid && !/^0+$/.test(valid[1]) && !/^0+$/.test(valid[2]);
      if (usable) {
        assert.equal(span.traceId, valid[1], `${parent} continued`);
        assert.equal(span.parentSpanId, valid[2]);
      } else {
        assert.equal(span.parentSpanId, undefined, `${parent} starts a trace`);
      }
    }
  });
});

describe('tracing settings and failures', () => {
  it('with the collector unreachable, requests go on and the export queue stays bounded', async () => {
    // A collector that accepts connections and never answers: every export waits out its timeout.
    const sockets = new Set();
    const blackHole = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const origin = await startOrigin({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${blackHole.address().port}`,
        OTEL_BSP_MAX_QUEUE_SIZE: '64',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '16',
        OTEL_BSP_SCHEDULE_DELAY: '20',
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
        OTEL_BSP_EXPORT_TIMEOUT: '300',
      },
    });
    try {
      const until = Date.now() + 3000;
      let answered = 0;
      while (Date.now() < until && answered < 1500) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, () => request(origin.url, '/favicon.ico')),
        );
        assert.ok(batch.every((res) => res.status === 200));
        answered += batch.length;
      }
      // The processor reports what it dropped once it can queue again.
      await sleep(700);
      await request(origin.url, '/favicon.ico');
      const { tracing } = await health(origin);
      assert.ok(tracing.ended >= answered, JSON.stringify(tracing));
      assert.equal(tracing.exported, 0);
      assert.ok(tracing.dropped > 0, `spans were dropped: ${JSON.stringify(tracing)}`);
      const held = tracing.ended - tracing.exported - tracing.failed - tracing.dropped;
      assert.ok(
        held <= 64 + 16 + 2,
        `at most a queue and a batch held: ${JSON.stringify(tracing)}`,
      );
      assert.ok(
        logLines(origin).some((line) => line.code === 'ORIGIN_TRACES_DROPPED'),
        'a warning said so',
      );
    } finally {
      await origin.stop();
      for (const socket of sockets) socket.destroy();
      blackHole.close();
    }
  });

  for (const [name, value, says] of [
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', 'must be an http(s) URL'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', 'grpc is not supported'],
    ['OTEL_TRACES_SAMPLER', 'sometimes', 'must be one of'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5', 'must be a number from 0 to 1'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'api-key', 'must be key=value pairs'],
    ['TRACEPARENT', 'trust', 'must be one of continue, obey, ignore'],
  ]) {
    it(`a bad ${name} stops the start in one line`, async () => {
      const { code, stderr } = await runOriginExpectingExit({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        [name]: value,
      });
      assert.equal(code, 1);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.ok(stderr.startsWith(`Cannot start: ${name} ${says}`), stderr);
    });
  }
});
