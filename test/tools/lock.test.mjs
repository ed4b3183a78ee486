// scripts/lib/lock.mjs: one holder at a time across processes, the others wait; a dead holder's
// lock (a build killed midway) is taken over, by one waiter only when several find it at once.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { takeLock } from '../../scripts/lib/lock.mjs';
import { waitFor } from '../helpers/wait.mjs';

const dir = mkdtempSync(join(tmpdir(), 'lock-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A pid no process has: a child's, once it has exited. */
function deadPid() {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

/**
 * Processes that each take the lock, hold it `holdMs`, and log when they held it: returns every
 * holding span [start, end] in ms since the epoch, and what each printed.
 */
async function contenders(count, lock, holdMs, live = []) {
  const script = `
    import { takeLock } from ${JSON.stringify(join(import.meta.dirname, '../../scripts/lib/lock.mjs'))};
    const release = await takeLock(${JSON.stringify(lock)}, { timeoutMs: 30000, what: 'test',
      onWait: (pid) => console.log('waiting for ' + pid) });
    const start = Date.now();
    await new Promise((resolve) => setTimeout(resolve, ${holdMs}));
    console.log(JSON.stringify([start, Date.now()]));
    release();`;
  const runs = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    live[i] = '';
    child.stdout.on('data', (chunk) => (live[i] += chunk));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out: live[i] })));
  });
  const results = await Promise.all(runs);
  for (const { code, out } of results) assert.equal(code, 0, out);
  return {
    spans: results.map(({ out }) => JSON.parse(out.trim().split('\n').at(-1))),
    outputs: results.map(({ out }) => out),
  };
}

/** No two spans overlap. */
function assertOneAtATime(spans) {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < sorted.length; i++)
    assert.ok(sorted[i][0] >= sorted[i - 1][1], `held at once: ${JSON.stringify(sorted)}`);
}

describe('takeLock', () => {
  it('gives the lock to one process at a time; the others say whom they wait for', async () => {
    const lock = join(dir, 'a.lock');
    // Held here until every contender has said it waits for this process: however slowly they
    // start, each must find it held.
    const release = await takeLock(lock, { timeoutMs: 1000, what: 'the test' });
    const live = [];
    const running = contenders(4, lock, 150, live);
    const waiting = () => live.filter((out) => out.includes(`waiting for ${process.pid}`)).length;
    await waitFor(() => waiting() >= 4, {
      what: 'word from every contender that it waits',
      timeoutMs: 30_000,
      seen: () => live.join('\n'),
    });
    assert.equal(waiting(), 4, live.join('\n'));
    release();
    const { spans } = await running;
    assertOneAtATime(spans);
    assert.ok(!existsSync(lock), 'released');
  });

  it('takes over the lock of a dead holder, one waiter at a time when several find it', async () => {
    const lock = join(dir, 'b.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(deadPid()));
    const { spans } = await contenders(4, lock, 150);
    assertOneAtATime(spans);
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith('b.lock')),
      [],
    );
  });

  it('takes over a lock left without a pid once it is old, not while it is being taken', async () => {
    const lock = join(dir, 'c.lock');
    mkdirSync(lock);
    // Fresh and without a pid: someone is taking it, so this waits (and gives up, bounded).
    await assert.rejects(
      takeLock(lock, { timeoutMs: 600, what: 'the test' }),
      /the test: .*c\.lock is still held by process \(unknown\) after 1 s/,
    );
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const release = await takeLock(lock, { timeoutMs: 600, what: 'the test' });
    release();
    assert.ok(!existsSync(lock));
  });

  it('waits at most its timeout for a live holder, and says who holds it', async () => {
    const lock = join(dir, 'd.lock');
    const release = await takeLock(lock, { timeoutMs: 1000, what: 'the test' });
    try {
      await assert.rejects(
        takeLock(lock, { timeoutMs: 300, what: 'building' }),
        new RegExp(`building: .*d\\.lock is still held by process ${process.pid}`),
      );
    } finally {
      release();
    }
  });
});
