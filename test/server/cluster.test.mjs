// WORKERS > 1: a primary supervising that many origin processes on one port (server/process/cluster.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DIST,
  onceForBothEngines,
  health,
  logLines,
  rawRequest,
  request,
  runOriginExpectingExit,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import { anyPortSetting } from '../../scripts/lib/ports.mjs';
import { waitFor } from '../helpers/wait.mjs';

/** The pids of the workers that answered `count` health checks. */
async function workerPids(origin, count = 20) {
  const pids = new Set();
  for (let i = 0; i < count; i++) pids.add((await health(origin)).pid);
  return pids;
}

describe(
  'cluster mode (WORKERS)',
  onceForBothEngines('the same processes whatever renders'),
  () => {
    it('serves from every worker, and /healthz says which one answered and how many there are', async () => {
      const origin = await startOrigin({ env: { WORKERS: '2' } });
      try {
        await workersListening(origin, 2); // the second worker may still be starting when the first says it listens
        const pids = await workerPids(origin);
        assert.equal(pids.size, 2, `answers came from ${[...pids].join(', ')}`);
        const answer = await health(origin);
        assert.equal(answer.workers, 2);
        assert.ok(answer.worker >= 1, JSON.stringify(answer));
        for (const path of ['/', '/products/5', '/favicon.ico', '/dashboard']) {
          assert.equal((await request(origin.url, path)).status, 200, path);
        }
      } finally {
        await origin.stop();
      }
    });

    it('WORKERS=auto runs one worker per CPU this process may use', async () => {
      const origin = await startOrigin({ env: { WORKERS: 'auto' } });
      try {
        const expected = availableParallelism();
        assert.equal((await health(origin)).workers ?? 1, expected);
        if (expected > 1) {
          await workersListening(origin, expected);
          assert.equal((await workerPids(origin)).size, expected);
        }
      } finally {
        await origin.stop();
      }
    });

    it('replaces a killed worker, and requests keep succeeding meanwhile', async () => {
      const origin = await startOrigin({ env: { WORKERS: '2' } });
      try {
        await workersListening(origin, 2);
        const before = await workerPids(origin);
        assert.equal(before.size, 2);
        const victim = [...before][0];
        process.kill(victim, 'SIGKILL');
        // A connection the primary hands to a worker in the moment it is SIGKILLed is lost (Node's
        // round-robin handoff; docs/scaling-and-deploying.md): requests start once the primary has seen the exit.
        const exited = await waitForLog(
          origin,
          (line) => line.msg === 'worker exited: starting another',
        );
        assert.equal(exited.pid, victim);
        assert.equal(exited.signal, 'SIGKILL');
        assert.equal(exited.delayMs, 100, 'its first early exit: the shortest delay');
        const statuses = [];
        let replaced;
        // Until the replacement says it listens, every request is served by the surviving worker.
        const replacement = waitForLog(
          origin,
          (line) =>
            line.msg.startsWith('Origin listening') && line.pid !== victim && !before.has(line.pid),
        );
        replacement.then((line) => (replaced = line.pid));
        while (replaced === undefined && statuses.length < 500) {
          statuses.push((await request(origin.url, `/products/${300 + statuses.length}`)).status);
        }
        assert.ok(
          statuses.length >= 1 && replaced !== undefined,
          `${statuses.length} requests, replaced by ${replaced}`,
        );
        assert.deepEqual(statuses, Array(statuses.length).fill(200));
        const after = await workerPids(origin);
        assert.deepEqual(
          [...after].sort(),
          [...before]
            .filter((pid) => pid !== victim)
            .concat(replaced)
            .sort(),
        );
      } finally {
        await origin.stop();
      }
    });

    it('loses no request when workers crash under load: each drains, the other serves, each is replaced', async () => {
      const origin = await startOrigin({
        nodeArgs: ['--import', join(import.meta.dirname, '../fixtures/crash-later.mjs')],
        env: {
          WORKERS: '2',
          CRASH_KIND: 'exception',
          CRASH_ON_SIGNAL: '1',
          CRASH_ONLY_WORKERS: '1',
        },
      });
      const listening = () =>
        logLines(origin).filter((line) => line.msg.startsWith('Origin listening')).length;
      try {
        await waitForLog(origin, () => listening() === 2);
        const statuses = [];
        const victims = [];
        let done = false;
        // Eight clients, each a new connection per request (mostly cheap ones, so a worker is often
        // idle and exits as soon as it crashes), while workers crash one after another: each crash
        // races the primary handing that worker new connections (server/process/worker.ts, exitProcess).
        const clients = Array.from({ length: 8 }, async (_, client) => {
          for (let i = 0; !done; i++) {
            const answer = await request(
              origin.url,
              i % 4 === 0 ? `/products/${20_000 + client * 1000 + i}` : '/favicon.ico',
            ).catch((error) => error);
            statuses.push(answer.status ?? answer.message);
          }
        });
        for (let round = 0; round < 5; round++) {
          // Crash a worker only while the other serves: with none left, connections are refused.
          await waitForLog(origin, () => listening() === 2 + round);
          await sleep(300);
          const pid = (await health(origin)).pid;
          victims.push(pid);
          process.kill(pid, 'SIGUSR2');
        }
        await waitForLog(origin, () => listening() === 7);
        await sleep(300);
        done = true;
        await Promise.all(clients);
        assert.ok(statuses.length > 50, `${statuses.length} requests`);
        assert.deepEqual(statuses, Array(statuses.length).fill(200));
        const exits = logLines(origin).filter(
          (line) => line.msg === 'worker exited: starting another',
        );
        assert.deepEqual(
          exits.map((line) => [line.pid, line.exitCode]),
          victims.map((pid) => [pid, 1]),
        );
        assert.equal((await workerPids(origin)).size, 2);
      } finally {
        await origin.stop();
      }
    });

    it('backs off when workers keep crashing at startup, and the primary survives', async () => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          join(import.meta.dirname, '../fixtures/crash-later.mjs'),
          join(DIST, 'server/server.mjs'),
        ],
        {
          env: {
            ...process.env,
            NG_ALLOWED_HOSTS: '',
            PORT: await anyPortSetting(),
            HOST: '127.0.0.1',
            WORKERS: '2',
            CRASH_KIND: 'exception',
            CRASH_AFTER_MS: '300',
            CRASH_ONLY_WORKERS: '1',
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const origin = { stdout: () => stdout };
      try {
        // Each worker lives ~0.7 s (startup, then the crash). Six restarts take ~3 s with the
        // delays below; without any, two workers would restart six times in ~1.5 s.
        await waitForLog(
          origin,
          () =>
            logLines(origin).filter((line) => line.msg === 'worker exited: starting another')
              .length >= 6,
          20_000,
        );
        const restarts = logLines(origin).filter(
          (line) => line.msg === 'worker exited: starting another',
        );
        assert.deepEqual(
          restarts.slice(0, 6).map((line) => line.delayMs),
          [100, 200, 400, 800, 1600, 3200],
        );
        assert.ok(
          restarts.every((line) => line.exitCode === 1 && line.uptimeMs < 10_000),
          JSON.stringify(restarts),
        );
        // Forks follow the delays: no worker starts before its restart's delay has passed.
        const crashes = logLines(origin).filter((line) => line.level === 60);
        assert.ok(
          crashes.length <= restarts.length + 2,
          `${crashes.length} crashes for ${restarts.length} restarts`,
        );
        // Each worker started (its exit's time less its uptime) no sooner than a restart's delay
        // allowed: the k-th restarted worker after the k-th earliest exit-plus-delay. Read from the
        // primary's own clock in its log, whatever the workers' lifetimes on this machine.
        const at = (line) => Date.parse(line.time);
        const starts = restarts.map((line) => at(line) - line.uptimeMs).sort((a, b) => a - b);
        const allowed = restarts.map((line) => at(line) + line.delayMs).sort((a, b) => a - b);
        // The two first workers were forked at startup, before any delay.
        starts.slice(2).forEach((start, k) => {
          assert.ok(start >= allowed[k] - 2, `a worker started ${allowed[k] - start} ms early`);
        });
        assert.equal(child.exitCode, null, 'the primary exited');
      } finally {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    });

    it('drains every worker on SIGTERM under load: nothing dropped, exit 0', async () => {
      const origin = await startOrigin({
        env: { WORKERS: '2', MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
      });
      await workersListening(origin, 2);
      const pipelined = (base) =>
        Array.from(
          { length: 40 },
          (_, i) => `GET /products/${base + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
        ).join('');
      // Two connections: the primary hands them to different workers.
      const loads = [8000, 9000].map((base, i) =>
        rawRequest(origin.port, pipelined(base), {
          timeoutMs: 30_000,
          afterWrite:
            i === 0
              ? (socket) => socket.once('data', () => process.kill(origin.pid, 'SIGTERM'))
              : undefined,
        }),
      );
      const answers = await Promise.all(loads);
      const code = await origin.exited;
      for (const { responses } of answers) {
        assert.deepEqual(
          responses.map((response) => Number(response.slice(9, 12))),
          Array(40).fill(200),
          'in-flight requests were lost',
        );
      }
      assert.equal(code, 0);
      const messages = logLines(origin).map((line) => line.msg);
      assert.ok(messages.includes('draining every worker'));
      assert.ok(messages.includes('every worker drained, exiting'));
    });

    it('turns /readyz 503 on every worker as soon as draining starts', async () => {
      const origin = await startOrigin({
        env: { WORKERS: '2', MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
      });
      await workersListening(origin, 2);
      // One connection per worker, each kept busy with renders; /readyz is written on it only after
      // SIGTERM, so it is answered while that worker drains (Node handles pipelined requests as they
      // arrive: one written up front would be answered before the signal).
      const renders = (base) =>
        Array.from(
          { length: 60 },
          (_, i) => `GET /products/${base + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
        ).join('');
      // Each /readyz goes out once both workers have logged that they drain: a fact, not a delay.
      const bothDraining = () =>
        logLines(origin).filter((line) => line.msg.startsWith('draining: no new connections'))
          .length >= 2;
      let answered = 0;
      const connections = [11_000, 12_000].map((base) =>
        rawRequest(
          origin.port,
          'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n' + renders(base),
          {
            timeoutMs: 30_000,
            afterWrite: (socket) => {
              socket.once('data', () => {
                // Once both workers answered their connection's first request, SIGTERM to the primary.
                if (++answered === 2) process.kill(origin.pid, 'SIGTERM');
                waitForLog(origin, bothDraining).then(() =>
                  socket.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n'),
                );
              });
            },
          },
        ),
      );
      const answers = await Promise.all(connections);
      const pids = answers.map(
        ({ responses }) => JSON.parse(responses[0].slice(responses[0].indexOf('\r\n\r\n') + 4)).pid,
      );
      assert.notEqual(pids[0], pids[1], 'both connections went to one worker');
      for (const { responses } of answers) {
        assert.equal(responses.length, 62);
        assert.deepEqual(
          responses.slice(1, 61).map((response) => Number(response.slice(9, 12))),
          Array(60).fill(200),
        );
        assert.match(responses[61], /^HTTP\/1\.1 503 /);
        assert.match(responses[61], /"status":"draining"/);
      }
      assert.equal(await origin.exited, 0);
    });
  },
);

describe('cluster mode: a worker that cannot start', () => {
  it('stops the primary (exit 1, the reason on stderr) instead of restarting workers that fail alike', async () => {
    const taken = await startOrigin();
    try {
      const started = Date.now();
      const { code, stderr } = await runOriginExpectingExit({
        WORKERS: '2',
        PORT: String(taken.port),
      });
      assert.equal(code, 1);
      assert.match(stderr, new RegExp(`^Cannot start: port ${taken.port} is in use$`, 'm'));
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await taken.stop();
    }
  });
});

/** Resolves with the first log line that satisfies `test` (polling), or fails after `timeoutMs`. */
function waitForLog(origin, test, timeoutMs = 15_000) {
  return waitFor(() => logLines(origin).find(test), {
    what: 'such log line',
    timeoutMs,
    seen: origin.stdout,
  });
}
