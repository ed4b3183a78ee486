// MAX_REQUESTS, MAX_REQUESTS_JITTER, MAX_RSS_MB: workers replaced under load, each replacement
// listening before the worker it replaces stops, without one failed request, over HTTP/1.1
// (autocannon) and HTTP/2 (a client of its own); recycles are counted once and never as crashes
// (server/process/recycling.ts, server/process/cluster.ts). On one engine only: what renders the
// pages plays no part in how a worker is replaced.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { h2Load } from '../helpers/h2-load.mjs';
import { http1Load } from '../../scripts/lib/http1-load.mjs';
import { METRICS_ON, metricsUrl, scrape, total } from '../helpers/metrics.mjs';
import {
  onceForBothEngines,
  health,
  logLines,
  runOriginExpectingExit,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const LEAK = join(import.meta.dirname, '../fixtures/leak.mjs');
/** Pages and a file: prerendered, rendered on every request (private), rendered once per worker, an asset. */
const PATHS = [
  '/',
  '/private-seen',
  '/favicon.ico',
  ...Array.from({ length: 20 }, (_, i) => `/products/${700 + i}`),
];
/** Recycles each test waits for: more than one round of the workers, one after another. */
const RECYCLES = 3;

/** The primary's 'worker recycled' lines so far. */
const recycled = (origin) => logLines(origin).filter((line) => line.msg === 'worker recycled');

/**
 * Each recycle as the log tells it, in order: the primary forked a replacement for the worker, the
 * replacement said it listens, the primary saw it listen and told the worker to drain, the worker
 * drained (reason `recycle`), and it exited 0. Returns the replacements' pids.
 */
function assertReplacementFirst(origin) {
  const lines = logLines(origin);
  const at = (test, from = 0) => {
    const index = lines.findIndex((line, i) => i >= from && test(line));
    assert.ok(index >= 0, `no such line after line ${from}:\n${origin.stdout()}`);
    return index;
  };
  const replacements = [];
  lines.forEach((done, exited) => {
    if (done.msg !== 'worker recycled') return;
    const { pid } = done;
    const forked = at(
      (line) => line.msg === 'recycling a worker: starting its replacement' && line.pid === pid,
    );
    const told = at(
      (line) =>
        line.msg === 'recycling a worker: its replacement listens, draining it' && line.pid === pid,
      forked,
    );
    const { replacement } = lines[told];
    // The replacement's own word that it listens, written after it was forked.
    at((line) => line.msg.startsWith('Origin listening') && line.pid === replacement, forked);
    const drained = at((line) => line.reason === 'recycle' && line.pid === pid, told);
    assert.ok(exited > drained, `worker ${pid} exited before it drained`);
    assert.equal(done.exitCode, 0, `worker ${pid} drained cleanly`);
    replacements.push(replacement);
  });
  return replacements;
}

/** The primary started each recycle after the one before it ended: one process beyond WORKERS at most. */
function assertOneAtATime(origin) {
  const steps = logLines(origin)
    .map((line) => line.msg)
    .filter(
      (msg) => msg === 'recycling a worker: starting its replacement' || msg === 'worker recycled',
    );
  steps.forEach((msg, i) =>
    assert.equal(
      msg,
      i % 2 === 0 ? 'recycling a worker: starting its replacement' : 'worker recycled',
    ),
  );
}

/** Waits (up to 10 s) until every recycle the primary started has ended. */
async function recyclesSettled(origin) {
  const started = () =>
    logLines(origin).filter((line) => line.msg === 'recycling a worker: starting its replacement')
      .length;
  await waitFor(() => recycled(origin).length >= started(), {
    what: 'end of every recycle started',
    timeoutMs: 10_000,
    everyMs: 50,
    seen: origin.stdout,
  });
}

/** Nothing the primary treats as a crash happened: no restart, no grace period cut short. */
function assertNoCrash(origin) {
  const bad = logLines(origin).filter(
    (line) =>
      line.msg === 'worker exited: starting another' ||
      line.msg === 'worker exited while its replacement was starting' ||
      line.msg.startsWith('grace period over') ||
      line.level >= 50,
  );
  assert.deepEqual(bad, []);
}

describe(
  'recycling workers (MAX_REQUESTS, MAX_RSS_MB)',
  onceForBothEngines('the same processes whatever renders'),
  () => {
    it('HTTP/1.1 under autocannon: workers leaking past MAX_RSS_MB are replaced one at a time, replacement first, and no request fails', async () => {
      const origin = await startOrigin({
        nodeArgs: ['--import', LEAK],
        env: { ...METRICS_ON, WORKERS: '2', MAX_RSS_MB: '160', LEAK_KB_PER_REQUEST: '96' },
      });
      let stopped;
      try {
        await workersListening(origin, 2);
        const url = await metricsUrl(origin);
        let sent = 0;
        let closes = 0;
        // Batches of an exact size, each accounted for to the request, until the recycles happened
        // and one of them drained a worker that held keep-alive connections of a batch (a worker
        // between two batches holds none, and has nothing to close).
        const enough = () => recycled(origin).length >= RECYCLES && closes > 0;
        await waitFor(
          async () => {
            if (enough()) return true;
            const batch = await http1Load({
              url: origin.url,
              paths: PATHS,
              amount: 1600,
              connections: 16,
            });
            sent += batch.sent;
            closes += batch.closes;
            assert.deepEqual(
              {
                answered: batch.answered,
                failed: batch.failed,
                errors: batch.errors,
                timeouts: batch.timeouts,
              },
              { answered: 1600, failed: 0, errors: 0, timeouts: 0 },
              JSON.stringify(batch.statuses),
            );
            return enough();
          },
          {
            what: `${RECYCLES} recycles, one of them closing connections`,
            timeoutMs: 45_000,
            everyMs: 0,
            seen: () =>
              `${recycled(origin).length} recycles, ${closes} connections closed:\n${origin.stdout()}`,
          },
        );
        await recyclesSettled(origin);
        const replacements = assertReplacementFirst(origin);
        assertOneAtATime(origin);
        assertNoCrash(origin);
        assert.ok(recycled(origin).every((line) => line.reason === 'max-rss'));
        for (const line of logLines(origin).filter((l) => l.reason === 'max-rss' && l.rssBytes)) {
          assert.ok(line.rssBytes >= 160 * 2 ** 20, `asked at ${line.rssBytes} bytes`);
        }
        // Slots 1 and 2 only, however many workers came and went.
        const { metrics } = await scrape(url);
        const slots = metrics.samples
          .filter((s) => s.name === 'origin_worker_resident_memory_bytes')
          .map((s) => s.labels.slot)
          .sort();
        assert.deepEqual(slots, ['1', '2']);
        assert.equal(
          total(metrics, 'origin_worker_recycles_total', { reason: 'max-rss' }),
          recycled(origin).length,
          'each recycle counted once, by the primary',
        );
        assert.equal(total(metrics, 'origin_worker_restarts_total'), 0);
        // The departed workers' answers are still counted: the sum never fell with a recycle.
        assert.equal(total(metrics, 'origin_response_duration_seconds_count'), sent);
        const gone = new Set(recycled(origin).map((line) => line.pid));
        for (let i = 0; i < 4; i++) {
          assert.ok(!gone.has((await health(origin)).pid), 'a recycled worker still answers');
        }
        assert.ok(replacements.length >= RECYCLES);
      } finally {
        stopped = await origin.stop();
      }
      assert.equal(stopped, 0);
    });

    it('HTTP/2: WORKERS=1 is a primary and one worker, replaced after MAX_REQUESTS (with jitter) by a replacement listening first; no stream fails, and a recycle is no crash', async (t) => {
      const origin = await startOrigin({
        protocol: 'h2',
        env: { WORKERS: '1', MAX_REQUESTS: '400', MAX_REQUESTS_JITTER: '100' },
      });
      let stopped;
      try {
        const first = await health(origin);
        assert.equal(first.workers, 1);
        assert.notEqual(first.pid, origin.pid, 'a worker answers, not the primary');
        const load = await h2Load({
          url: origin.url,
          paths: PATHS,
          until: () => recycled(origin).length >= RECYCLES,
        });
        t.diagnostic(JSON.stringify({ ...load, failed: load.failed.length }));
        assert.ok(load.reached, `${recycled(origin).length} recycles in 40 s:\n${origin.stdout()}`);
        assert.deepEqual(load.failed, []);
        assert.ok(load.answered > 0);
        assert.ok(load.sessions > 4, 'GOAWAY moved the sessions to new connections');
        await recyclesSettled(origin);
        const replacements = assertReplacementFirst(origin);
        assertOneAtATime(origin);
        assertNoCrash(origin);
        const asks = logLines(origin).filter((line) => line.msg.startsWith('recycling: asking'));
        assert.ok(asks.length >= RECYCLES);
        for (const ask of asks) {
          assert.equal(ask.reason, 'max-requests');
          assert.ok(ask.maxRequests >= 400 && ask.maxRequests <= 500, `limit ${ask.maxRequests}`);
          assert.equal(ask.requests, ask.maxRequests);
        }
        const serving = await health(origin);
        assert.ok(replacements.includes(serving.pid), `${serving.pid} is a replacement`);

        // Those workers lived a few seconds each: were recycles crashes, this one would wait 400 ms
        // or more (its backoff doubles per early exit); it is the first, 100 ms, or none.
        process.kill(serving.pid, 'SIGKILL');
        const exited = await waitFor(
          () => logLines(origin).find((l) => l.msg === 'worker exited: starting another'),
          { what: 'sign that the primary saw the kill', timeoutMs: 10_000 },
        );
        assert.equal(exited.pid, serving.pid);
        assert.equal(exited.delayMs, exited.uptimeMs < 10_000 ? 100 : 0, JSON.stringify(exited));
      } finally {
        stopped = await origin.stop();
      }
      assert.equal(stopped, 0);
    });

    it('WORKERS=1 without a recycle limit (0 is none) serves in one process, without a primary', async () => {
      const origin = await startOrigin({
        env: { WORKERS: '1', MAX_REQUESTS: '0', MAX_RSS_MB: '0' },
      });
      try {
        assert.equal((await health(origin)).pid, origin.pid);
      } finally {
        await origin.stop();
      }
    });

    it('stops at start, in one line, when MAX_RSS_MB is below what a worker holds before it serves', async () => {
      const { code, stderr } = await runOriginExpectingExit({ MAX_RSS_MB: '64' });
      assert.equal(code, 1);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(
        lines[0],
        /^Cannot start: MAX_RSS_MB is 64, but a worker holds \d+ MiB before it serves anything: set it above/,
      );
    });
  },
);
