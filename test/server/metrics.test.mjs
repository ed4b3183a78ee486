// METRICS_PORT: the Prometheus endpoint (server/metrics/), on its own port, read from the same
// figures as /healthz; in cluster mode the primary serves the sum over its workers.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { listenOnFreePort } from '../../scripts/lib/ports.mjs';
import {
  logLines,
  request,
  runOriginExpectingExit,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import {
  METRICS_LINE,
  METRICS_ON,
  metricsUrl,
  scrape,
  scrapeUntil,
  total,
} from '../helpers/metrics.mjs';

/** A histogram as Prometheus reads it: cumulative buckets, +Inf equal to its count. */
function assertHistogram(metrics, name, labels = {}) {
  const buckets = metrics.samples.filter(
    (s) =>
      s.name === `${name}_bucket` &&
      Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  assert.ok(buckets.length > 1, `${name} has buckets`);
  for (let i = 1; i < buckets.length; i++) {
    assert.ok(buckets[i].value >= buckets[i - 1].value, `${name} buckets are cumulative`);
  }
  assert.equal(buckets.at(-1).labels.le, '+Inf');
  assert.equal(buckets.at(-1).value, total(metrics, `${name}_count`, labels));
  assert.equal(metrics.types.get(name), 'histogram');
}

/**
 * TCP ports a process listens on, from /proc (Linux): its socket inodes matched against the
 * kernel's table of listening sockets. Undefined where /proc is not there to read.
 */
function listeningPorts(pid) {
  if (!existsSync(`/proc/${pid}/fd`)) return undefined;
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A: LISTEN
      if (fields[3] === '0A' && inodes.has(fields[9])) {
        ports.push(parseInt(fields[1].split(':')[1], 16));
      }
    }
  }
  return ports.sort((a, b) => a - b);
}

/**
 * The port of the process's private listener for its app's own API (process/api-listener.ts), on
 * loopback only: the tests' app has an API. Read from the start line's `apiVia`.
 */
function privatePorts(origin) {
  const line = logLines(origin).find((l) => l.msg?.startsWith('Origin listening'));
  return line?.apiVia ? [Number(new URL(line.apiVia).port)] : [];
}

describe('metrics (METRICS_PORT)', () => {
  it('counts the requests sent and the renders they caused, from the same figures as /healthz', async () => {
    const origin = await startOrigin({ env: METRICS_ON });
    try {
      const url = await metricsUrl(origin);
      const metricsPort = Number(new URL(url).port);
      assert.notEqual(metricsPort, origin.port);
      const ports = listeningPorts(origin.pid);
      if (ports) {
        assert.deepEqual(
          ports,
          [origin.port, metricsPort, ...privatePorts(origin)].sort((a, b) => a - b),
        );
      }

      const statuses = [];
      const send = async (path, headers) =>
        statuses.push((await request(origin.url, path, { headers })).status);
      await send('/'); // a host seen for the first time: through Koa
      const etag = (await request(origin.url, '/')).headers.etag;
      statuses.push(200);
      await send('/', { 'if-none-match': etag }); // 304 from memory, before Koa
      await send('/products/1'); // rendered
      await send('/products/1'); // fresh in the render cache: the fast path
      await send('/products/2'); // rendered
      await send('/no-such-page'); // the not-found page, rendered with 404
      assert.deepEqual(statuses, [200, 200, 304, 200, 200, 200, 404]);

      const metrics = await scrapeUntil(
        url,
        (m) => total(m, 'origin_response_duration_seconds_count') >= statuses.length,
      );
      const responses = (labels) =>
        total(metrics, 'origin_response_duration_seconds_count', labels);
      assert.equal(responses(), statuses.length);
      assert.equal(responses({ status: '2xx' }), 5);
      assert.equal(responses({ status: '3xx' }), 1);
      assert.equal(responses({ status: '4xx' }), 1);
      assert.equal(responses({ status: '5xx' }), 0);
      assert.equal(responses({ answer: 'fast-path', status: '3xx' }), 1);
      // The second `/` and the cached /products/1, at least; the first of a host goes through Koa.
      assert.ok(responses({ answer: 'fast-path' }) >= 3, JSON.stringify(metrics.samples));
      assert.ok(responses({ answer: 'koa' }) >= 4);
      assertHistogram(metrics, 'origin_response_duration_seconds', {
        answer: 'koa',
        status: '2xx',
      });

      // The same figures as /healthz (a health check renders nothing and reads no cache).
      const health = JSON.parse((await request(origin.url, '/healthz')).text);
      const started = total(metrics, 'origin_renders_started_total');
      assert.equal(started, health.renders.started);
      assert.ok(started >= 3, `renders: ${started}`);
      assert.equal(total(metrics, 'origin_render_duration_seconds_count'), started);
      assertHistogram(metrics, 'origin_render_duration_seconds');
      assert.ok(total(metrics, 'origin_render_duration_seconds_sum') > 0);
      assert.equal(total(metrics, 'origin_renders_running'), 0);
      assert.equal(total(metrics, 'origin_renders_queued'), 0);
      assert.equal(metrics.types.get('origin_renders_started_total'), 'counter');
      for (const [name, key] of [
        ['origin_render_cache_entries', 'entries'],
        ['origin_render_cache_bytes', 'bytes'],
        ['origin_render_cache_hits_total', 'hits'],
        ['origin_render_cache_misses_total', 'misses'],
      ]) {
        assert.equal(total(metrics, name), health.renderCache[key], name);
      }
      assert.equal(total(metrics, 'origin_render_cache_entries'), 2);
      assert.equal(
        total(metrics, 'origin_revalidations_requested_total'),
        health.revalidations.requested,
      );
      assert.equal(metrics.types.get('origin_revalidations_received_total'), 'counter');
      // Node's own process metrics, per process.
      assert.ok(total(metrics, 'process_cpu_seconds_total') > 0);
      // Its memory and event-loop delay, in slot 1 when alone; no primary's figures.
      for (const name of [
        'origin_worker_resident_memory_bytes',
        'origin_worker_heap_used_bytes',
        'origin_worker_event_loop_delay_p99_seconds',
        'origin_worker_event_loop_delay_max_seconds',
      ]) {
        const series = metrics.samples.filter((s) => s.name === name);
        assert.deepEqual(
          series.map((s) => s.labels),
          [{ slot: '1' }],
          name,
        );
        assert.equal(metrics.types.get(name), 'gauge');
      }
      assert.ok(total(metrics, 'origin_worker_resident_memory_bytes') > 32 * 2 ** 20);
      assert.ok(total(metrics, 'origin_worker_heap_used_bytes') > 0);
      assert.ok(
        total(metrics, 'origin_worker_event_loop_delay_max_seconds') >=
          total(metrics, 'origin_worker_event_loop_delay_p99_seconds'),
      );
      assert.equal(metrics.types.get('origin_worker_recycles_total'), undefined);
    } finally {
      await origin.stop();
    }
  });

  it('answers /metrics only on its own port, with the registry content type; nothing else there', async () => {
    const origin = await startOrigin({ env: METRICS_ON });
    try {
      const url = await metricsUrl(origin);
      const { res } = await scrape(url);
      assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal((await request(url, '/metrics', { method: 'HEAD' })).status, 200);
      assert.equal((await request(url, '/')).status, 404);
      assert.equal((await request(url, '/healthz')).status, 404);
      const post = await request(url, '/metrics', { method: 'POST', body: 'x' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');

      // On the public port /metrics is a page path like any other: the app's not-found page.
      const pub = await request(origin.url, '/metrics');
      assert.equal(pub.status, 404);
      assert.doesNotMatch(pub.text, /# TYPE|origin_renders/);
    } finally {
      await origin.stop();
    }
  });

  it("without METRICS_PORT there is no listener but the public port (and the API's private loopback one), and no metrics line", async () => {
    const origin = await startOrigin();
    try {
      assert.doesNotMatch(origin.stdout(), METRICS_LINE);
      assert.equal((await request(origin.url, '/')).status, 200);
      const ports = listeningPorts(origin.pid);
      if (ports) {
        assert.deepEqual(
          ports,
          [origin.port, ...privatePorts(origin)].sort((a, b) => a - b),
        );
      }
    } finally {
      await origin.stop();
    }
  });

  it('WORKERS=2: the primary serves the sum over both workers', async () => {
    const origin = await startOrigin({ env: { ...METRICS_ON, WORKERS: '2' } });
    try {
      const url = await metricsUrl(origin);
      await workersListening(origin, 2);
      let sent = 0;
      const pages = 10;
      for (let id = 1; id <= pages; id++) {
        // A new connection each time (the helper closes it): the primary hands them out in turn.
        assert.equal((await request(origin.url, `/products/${100 + id}`)).status, 200);
        sent++;
      }
      // Each worker's own figures, through /healthz: ask until both have answered.
      const byWorker = new Map();
      for (let i = 0; i < 40 && byWorker.size < 2; i++) {
        const health = JSON.parse((await request(origin.url, '/healthz')).text);
        sent++;
        byWorker.set(health.pid, health);
      }
      assert.equal(byWorker.size, 2, 'both workers answered');
      const started = [...byWorker.values()].map((health) => health.renders.started);
      assert.ok(
        started.every((count) => count > 0),
        `renders per worker: ${started.join(', ')}: the pages went to both`,
      );
      assert.equal(
        started.reduce((a, b) => a + b),
        pages,
      );

      const metrics = await scrapeUntil(
        url,
        (m) => total(m, 'origin_response_duration_seconds_count') >= sent,
      );
      assert.equal(total(metrics, 'origin_response_duration_seconds_count'), sent);
      assert.equal(total(metrics, 'origin_renders_started_total'), pages);
      assert.equal(total(metrics, 'origin_render_duration_seconds_count'), pages);
      assert.equal(total(metrics, 'origin_render_cache_entries'), pages);
      assert.equal(total(metrics, 'origin_render_cache_misses_total'), pages);
      assertHistogram(metrics, 'origin_render_duration_seconds');
      // One sample per family, not one per worker: aggregated, not concatenated.
      assert.equal(
        metrics.samples.filter((s) => s.name === 'origin_renders_started_total').length,
        1,
      );
      const ports = listeningPorts(origin.pid);
      if (ports) assert.ok(ports.includes(Number(new URL(url).port)), 'the primary serves it');
    } finally {
      assert.equal(await origin.stop(), 0, 'drains and exits 0 with metrics on');
    }
  });

  it('WORKERS=2: what a killed worker counted stays in the sums, and its slot is taken by the next', async () => {
    const origin = await startOrigin({ env: { ...METRICS_ON, WORKERS: '2' } });
    try {
      const url = await metricsUrl(origin);
      await workersListening(origin, 2);
      const pages = 12;
      for (let id = 1; id <= pages; id++) {
        assert.equal((await request(origin.url, `/products/${200 + id}`)).status, 200);
      }
      const before = await scrapeUntil(
        url,
        (m) => total(m, 'origin_renders_started_total') >= pages,
      );
      assert.equal(total(before, 'origin_renders_started_total'), pages);
      const slots = (metrics) =>
        metrics.samples
          .filter((s) => s.name === 'origin_worker_resident_memory_bytes')
          .map((s) => s.labels.slot)
          .sort();
      assert.deepEqual(slots(before), ['1', '2']);
      const victim = JSON.parse((await request(origin.url, '/healthz')).text);
      assert.ok(victim.renders.started > 0, 'the victim rendered some of the pages');
      process.kill(victim.pid, 'SIGKILL');
      await workersListening(origin, 3);
      // Summed over the live workers alone, the renders would fall by the victim's. The primary
      // skips a worker still starting: wait until the new one answers too.
      const after = { metrics: await scrapeUntil(url, (m) => slots(m).length === 2) };
      assert.equal(total(after.metrics, 'origin_renders_started_total'), pages);
      assert.ok(
        total(after.metrics, 'origin_response_duration_seconds_count') >=
          total(before, 'origin_response_duration_seconds_count'),
      );
      assert.equal(total(after.metrics, 'origin_worker_restarts_total'), 1);
      assert.deepEqual(slots(after.metrics), ['1', '2'], 'the new worker took the slot');
    } finally {
      await origin.stop();
    }
  });

  it('with REDIS_URL: the shared tier state and counters, as /healthz reports them', async () => {
    const redis = await startRedis();
    const origins = [];
    try {
      // A generous Redis timeout: a hit, not a timeout, is expected on a busy machine too.
      const env = { ...METRICS_ON, REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000' };
      origins.push(...(await Promise.all([startOrigin({ env }), startOrigin({ env })])));
      const [a, b] = origins;
      const [urlA, urlB] = await Promise.all(origins.map(metricsUrl));
      const state = async (url, wanted) =>
        total(
          await scrapeUntil(url, (m) => total(m, 'origin_shared_cache_state', wanted) === 1),
          'origin_shared_cache_state',
          wanted,
        );
      for (const url of [urlA, urlB]) {
        assert.equal(await state(url, { state: 'ready' }), 1);
      }
      // The same Host for both, as behind one load balancer: their cache keys agree.
      const host = { host: 'localhost:4000' };
      assert.equal((await request(a.url, '/products/601', { headers: host })).status, 200);
      const onA = await scrapeUntil(urlA, (m) => total(m, 'origin_shared_cache_stores_total') >= 1);
      assert.equal(total(onA, 'origin_shared_cache_stores_total'), 1);
      const second = await request(b.url, '/products/601', { headers: host });
      assert.match(second.headers['cache-status'], /^shared-cache; hit/);
      const onB = await scrapeUntil(urlB, (m) => total(m, 'origin_shared_cache_hits_total') >= 1);
      assert.equal(total(onB, 'origin_shared_cache_hits_total'), 1);
      assert.equal(total(onB, 'origin_renders_started_total'), 0, 'B rendered nothing');
      assert.equal(total(onB, 'origin_shared_cache_state'), 1, 'one state at a time');
      assert.equal(total(onB, 'origin_shared_cache_skipped_total'), 0);
      assert.ok(
        onB.samples.some(
          (s) => s.name === 'origin_shared_cache_skipped_total' && s.labels.reason === 'down',
        ),
        'skips by reason',
      );
      const health = JSON.parse((await request(b.url, '/healthz')).text);
      for (const [name, key] of [
        ['origin_shared_cache_hits_total', 'hits'],
        ['origin_shared_cache_misses_total', 'misses'],
        ['origin_shared_cache_stores_total', 'stores'],
        ['origin_shared_cache_lock_waits_total', 'lockWaits'],
      ]) {
        assert.equal(total(onB, name), health.sharedCache[key], name);
      }

      // Redis gone: the state says so, and requests that go on without it are counted by reason.
      await redis.stop();
      assert.equal(
        (await request(b.url, '/products/602', { headers: host })).status,
        200,
        'never the origin failing',
      );
      const down = await scrapeUntil(
        urlB,
        (m) => total(m, 'origin_shared_cache_skipped_total') >= 1,
        10_000,
      );
      assert.ok(total(down, 'origin_shared_cache_skipped_total') >= 1);
      assert.equal(total(down, 'origin_shared_cache_state', { state: 'ready' }), 0);
    } finally {
      await Promise.all(origins.map((o) => o.stop()));
      await redis.close();
    }
  });

  it('stops with a one-line message when METRICS_PORT is taken, alone and as a cluster primary', async () => {
    const taken = createServer();
    // Every interface, as a service already on that port would hold it.
    const port = await listenOnFreePort(taken, undefined);
    try {
      for (const workers of ['1', '2']) {
        const { code, stdout, stderr } = await runOriginExpectingExit({
          METRICS_PORT: String(port),
          WORKERS: workers,
        });
        assert.equal(code, 1, `WORKERS=${workers}`);
        assert.equal(stderr.trim(), `Cannot start: METRICS_PORT ${port} is in use`);
        assert.doesNotMatch(stdout, /starting 2 workers/, 'no worker was started');
      }
    } finally {
      taken.close();
    }
  });
});
