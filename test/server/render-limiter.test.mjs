// The render limiter on its own (Node runs the TypeScript source directly, types stripped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  COHORT_WAIT_MS,
  OverloadedError,
  RenderLimiter,
} from '../../server/pages/render-limiter.ts';

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
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 10 });
    const tasks = [deferredTask(), deferredTask(), deferredTask()];
    const runs = tasks.map((t) => limiter.run(t.task, never));
    await Promise.resolve();
    assert.deepEqual(
      tasks.map((t) => t.started),
      [true, false, false],
    );
    assert.deepEqual(limiter.stats, { running: 1, queued: 2, backgroundQueued: 0 });
    tasks[0].finish.resolve('a');
    assert.equal(await runs[0], 'a');
    await Promise.resolve();
    assert.deepEqual(
      tasks.map((t) => t.started),
      [true, true, false],
    );
    assert.deepEqual(limiter.stats, { running: 1, queued: 1, backgroundQueued: 0 });
    tasks[1].finish.resolve('b');
    assert.equal(await runs[1], 'b');
    await Promise.resolve();
    assert.equal(tasks[2].started, true);
    tasks[2].finish.resolve('c');
    assert.equal(await runs[2], 'c');
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
  });

  it('starts waiting requests together once three quarters of the slots are free', async () => {
    const limiter = new RenderLimiter({ maxRunning: 8, maxQueued: 100 });
    const tasks = Array.from({ length: 14 }, deferredTask);
    const runs = tasks.map((t) => limiter.run(t.task, never));
    await Promise.resolve();
    const started = () => tasks.filter((t) => t.started).length;
    assert.equal(started(), 8);
    // Five renders end: three still run, above a quarter of eight, so the five slots wait.
    for (const t of tasks.slice(0, 5)) t.finish.resolve();
    await Promise.all(runs.slice(0, 5));
    assert.equal(started(), 8);
    assert.deepEqual(limiter.stats, { running: 3, queued: 6, backgroundQueued: 0 });
    // The sixth leaves two running: six of the waiting start at once, in the order they came.
    tasks[5].finish.resolve();
    await runs[5];
    await Promise.resolve();
    assert.deepEqual(
      tasks.map((t) => t.started),
      [...Array(14).fill(true)],
    );
    assert.deepEqual(limiter.stats, { running: 8, queued: 0, backgroundQueued: 0 });
    for (const t of tasks.slice(6)) t.finish.resolve();
    await Promise.all(runs);
  });

  it('fills a freed slot after COHORT_WAIT_MS when its cohort is late', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const limiter = new RenderLimiter({ maxRunning: 4, maxQueued: 10 });
    const tasks = Array.from({ length: 5 }, deferredTask);
    const runs = tasks.map((task) => limiter.run(task.task, never));
    tasks[0].finish.resolve();
    await runs[0];
    await Promise.resolve();
    assert.equal(tasks[4].started, false, 'three slow renders still run: the slot waits');
    t.mock.timers.tick(COHORT_WAIT_MS - 1);
    await Promise.resolve();
    assert.equal(tasks[4].started, false);
    t.mock.timers.tick(1);
    await Promise.resolve();
    assert.equal(tasks[4].started, true, 'no slot waits longer than COHORT_WAIT_MS');
    for (const task of tasks.slice(1)) task.finish.resolve();
    await Promise.all(runs);
  });

  it('queues newcomers behind waiting requests, and never sheds one while a slot is free', async () => {
    const limiter = new RenderLimiter({ maxRunning: 4, maxQueued: 1 });
    const tasks = Array.from({ length: 6 }, deferredTask);
    const runs = tasks.slice(0, 5).map((t) => limiter.run(t.task, never));
    tasks[0].finish.resolve();
    await runs[0];
    // A slot is free but task 4 waits for its cohort: task 5 may not overtake it, and the full
    // queue starts the cohort instead of shedding task 5.
    runs.push(limiter.run(tasks[5].task, never));
    await Promise.resolve();
    assert.equal(tasks[4].started, true);
    assert.equal(tasks[5].started, false);
    assert.deepEqual(limiter.stats, { running: 4, queued: 1, backgroundQueued: 0 });
    for (const t of tasks.slice(1)) t.finish.resolve();
    await Promise.all(runs);
    assert.equal(tasks[5].started, true);
  });

  it('sheds with OverloadedError (503) when the queue is full', async () => {
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 1 });
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
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 5 });
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
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 5 });
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
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 0 });
    await assert.rejects(
      limiter.run(() => Promise.reject(new Error('render failed')), never),
      /render failed/,
    );
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
    assert.equal(await limiter.run(async () => 'ok', never), 'ok');
  });
});

describe('RenderLimiter under any sequence of arrivals, ends, aborts and time', () => {
  const step = fc.oneof(
    fc.record({ op: fc.constant('request'), abortable: fc.boolean() }),
    fc.record({ op: fc.constant('background') }),
    fc.record({ op: fc.constant('end'), pick: fc.nat(), fail: fc.boolean() }),
    fc.record({ op: fc.constant('abort'), pick: fc.nat() }),
    fc.record({ op: fc.constant('tick'), ms: fc.integer({ min: 0, max: COHORT_WAIT_MS + 2 }) }),
  );
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };

  it('keeps its bounds and its order, and no slot stays free while work waits', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(step, { maxLength: 60 }),
        async (maxRunning, maxQueued, steps) => {
          const limiter = new RenderLimiter({ maxRunning, maxQueued });
          const all = [];
          const isRunning = (e) => e.started && e.outcome === undefined;
          const isWaiting = (e) => !e.started && e.outcome === undefined;
          let freeWhileWaitingMs = 0;
          for (const s of steps) {
            const startedBefore = new Set(all.filter((e) => e.started));
            if (s.op === 'request' || s.op === 'background') {
              const before = limiter.stats;
              const entry = deferredTask();
              entry.background = s.op === 'background';
              entry.abortable = s.abortable === true;
              entry.controller = new AbortController();
              const run = entry.background
                ? limiter.runInBackground(entry.task)
                : limiter.run(entry.task, entry.controller.signal);
              run.then(
                () => (entry.outcome = 'done'),
                (error) => (entry.outcome = error instanceof OverloadedError ? 'shed' : 'failed'),
              );
              all.push(entry);
              await settle();
              if (entry.outcome === 'shed') {
                const queued = entry.background ? before.backgroundQueued : before.queued;
                assert.ok(queued >= maxQueued, `shed with ${queued} of ${maxQueued} waiting`);
                assert.ok(
                  before.running === maxRunning || (entry.background && before.queued > 0),
                  `shed with ${before.running} of ${maxRunning} slots busy`,
                );
              }
            } else if (s.op === 'end') {
              const running = all.filter(isRunning);
              if (running.length > 0) {
                const e = running[s.pick % running.length];
                if (s.fail) e.finish.reject(new Error('render failed'));
                else e.finish.resolve();
                await settle();
              }
            } else if (s.op === 'abort') {
              const waiting = all.filter((e) => e.abortable && isWaiting(e));
              if (waiting.length > 0) {
                waiting[s.pick % waiting.length].controller.abort(new Error('client left'));
                await settle();
              }
            } else {
              t.mock.timers.tick(s.ms);
              freeWhileWaitingMs += s.ms;
              await settle();
            }

            const running = all.filter(isRunning).length;
            const waiting = all.filter(isWaiting);
            const requestsWaiting = waiting.filter((e) => !e.background).length;
            assert.deepEqual(limiter.stats, {
              running,
              queued: requestsWaiting,
              backgroundQueued: waiting.length - requestsWaiting,
            });
            assert.ok(running <= maxRunning);
            assert.ok(requestsWaiting <= maxQueued);
            // Requests start in the order they came (those that left or were shed never start).
            const requests = all.filter((e) => !e.background && (e.started || isWaiting(e)));
            const firstWaiting = requests.findIndex(isWaiting);
            assert.ok(firstWaiting === -1 || requests.slice(firstWaiting).every(isWaiting));
            // Background work starts only when no request is left waiting.
            const backgroundStarted = all.some(
              (e) => e.background && e.started && !startedBefore.has(e),
            );
            assert.ok(!backgroundStarted || requestsWaiting === 0);
            // While work waits, a slot is free only while over a quarter of them run, and never
            // for longer than COHORT_WAIT_MS.
            if (running === maxRunning || waiting.length === 0) {
              freeWhileWaitingMs = 0;
            } else {
              assert.ok(
                requestsWaiting === 0 || running > Math.floor(maxRunning / 4),
                `${requestsWaiting} requests wait with ${running} of ${maxRunning} slots busy`,
              );
              assert.ok(
                freeWhileWaitingMs <= COHORT_WAIT_MS,
                `a slot stayed free ${freeWhileWaitingMs} ms while work waited`,
              );
            }
          }
          for (const e of all.filter(isRunning)) e.finish.resolve();
          t.mock.timers.tick(COHORT_WAIT_MS);
          await settle();
        },
      ),
      { numRuns: 300 },
    );
  });
});
