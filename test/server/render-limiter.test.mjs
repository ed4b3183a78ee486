// The render limiter on its own (Node runs the TypeScript source directly, types stripped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OverloadedError, RenderLimiter } from '../../server/pages/render-limiter.ts';

/** A task that finishes only when told to. */
function deferredTask() {
  let finish;
  const done = new Promise((resolve, reject) => (finish = { resolve, reject }));
  let started = false;
  return {
    task: () => {
      started = true;
      return done;
    },
    get started() {
      return started;
    },
    finish,
  };
}

const never = new AbortController().signal;

describe('RenderLimiter', () => {
  it('runs up to the limit at once and queues the rest in order', async () => {
    const limiter = new RenderLimiter(2, 10);
    const tasks = [deferredTask(), deferredTask(), deferredTask()];
    const runs = tasks.map((t) => limiter.run(t.task, never));
    await Promise.resolve();
    assert.deepEqual(
      tasks.map((t) => t.started),
      [true, true, false],
    );
    assert.deepEqual(limiter.stats, { running: 2, queued: 1, backgroundQueued: 0 });
    tasks[0].finish.resolve('a');
    assert.equal(await runs[0], 'a');
    await Promise.resolve();
    assert.equal(tasks[2].started, true);
    assert.deepEqual(limiter.stats, { running: 2, queued: 0, backgroundQueued: 0 });
    tasks[1].finish.resolve('b');
    tasks[2].finish.resolve('c');
    assert.deepEqual(await Promise.all(runs.slice(1)), ['b', 'c']);
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
  });

  it('sheds with OverloadedError (503) when the queue is full', async () => {
    const limiter = new RenderLimiter(1, 1);
    const first = deferredTask();
    const running = limiter.run(first.task, never);
    const queued = limiter.run(deferredTask().task, never);
    await assert.rejects(limiter.run(deferredTask().task, never), (error) => {
      assert.ok(error instanceof OverloadedError);
      assert.equal(error.status, 503);
      return true;
    });
    first.finish.resolve();
    await running;
    queued.catch(() => {});
  });

  it('keeps the slot of a task whose caller gave up until the task settles', async () => {
    const limiter = new RenderLimiter(1, 5);
    const slow = deferredTask();
    const abandoned = new AbortController();
    const run = limiter.run(slow.task, abandoned.signal);
    abandoned.abort(new Error('timed out'));
    const next = deferredTask();
    const nextRun = limiter.run(next.task, never);
    await Promise.resolve();
    assert.equal(next.started, false, 'a new render started while the abandoned one still runs');
    slow.finish.resolve();
    await run;
    await Promise.resolve();
    assert.equal(next.started, true);
    next.finish.resolve();
    await nextRun;
  });

  it('drops a queued task whose caller left, without ever running it', async () => {
    const limiter = new RenderLimiter(1, 5);
    const busy = deferredTask();
    const running = limiter.run(busy.task, never);
    const leaving = new AbortController();
    const never_run = deferredTask();
    const queued = limiter.run(never_run.task, leaving.signal);
    assert.deepEqual(limiter.stats, { running: 1, queued: 1, backgroundQueued: 0 });
    leaving.abort(new Error('client left'));
    await assert.rejects(queued, /client left/);
    assert.deepEqual(limiter.stats, { running: 1, queued: 0, backgroundQueued: 0 });
    busy.finish.resolve();
    await running;
    assert.equal(never_run.started, false);
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
  });

  it('releases the slot when a task fails', async () => {
    const limiter = new RenderLimiter(1, 0);
    await assert.rejects(
      limiter.run(() => Promise.reject(new Error('render failed')), never),
      /render failed/,
    );
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
    assert.equal(await limiter.run(async () => 'ok', never), 'ok');
  });
});
