// answeredRun (bench/lib/load.mjs): a measured run with no answer in it is made again, longer, after
// the server settled, and only the last run's figures are kept; a default-length run never is.
// measuredRun reads CPU and counters around the run that is kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answeredRun, cpuShare, LONGEST_RUN_S, measuredRun, minus } from '../../bench/lib/load.mjs';

/** A fake run per duration: answers once it lasts `answersFrom` seconds; records what happened. */
function runs(answersFrom) {
  const events = [];
  const once = async (duration) => {
    events.push(`run ${duration}`);
    return { result: { requests: duration >= answersFrom ? 10 : 0 }, tag: duration };
  };
  const options = (duration) => ({
    duration,
    settle: async () => events.push('settle'),
    log: () => events.push('log'),
  });
  return { events, once, options };
}

test('a run with answers is kept as it is', async () => {
  const { events, once, options } = runs(1);
  const run = await answeredRun(once, options(1));
  assert.deepEqual(events, ['run 1']);
  assert.equal(run.tag, 1);
  assert.equal(run.lengthenedTo, undefined);
});

test('a short run without answers is made again twice as long, after the server settled', async () => {
  const { events, once, options } = runs(4);
  const run = await answeredRun(once, options(1));
  assert.deepEqual(events, ['run 1', 'log', 'settle', 'run 2', 'log', 'settle', 'run 4']);
  assert.equal(run.tag, 4);
  assert.equal(run.lengthenedTo, 4);
});

test('never beyond the longest run: a server that answers nothing stays without answers', async () => {
  const { events, once, options } = runs(Infinity);
  const run = await answeredRun(once, options(1));
  assert.equal(run.result.requests, 0);
  assert.equal(run.lengthenedTo, LONGEST_RUN_S);
  assert.equal(events.filter((event) => event.startsWith('run')).at(-1), `run ${LONGEST_RUN_S}`);
  // A default-length run is the server's answer, not a run too short for this machine.
  const long = runs(Infinity);
  const tenSeconds = await answeredRun(long.once, long.options(10));
  assert.deepEqual(long.events, ['run 10']);
  assert.equal(tenSeconds.lengthenedTo, undefined);
});

test('measuredRun: the CPU each process spent and what was counted, over the kept run alone', async () => {
  let requests = 0;
  const counters = { done: 0, other: 5 };
  // Spends `ms` of this process's CPU time (not of the wall clock: the machine may be busy).
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const busy = (ms) => {
    const end = cpuMs() + ms;
    while (cpuMs() < end);
  };
  const run = await measuredRun(
    async (duration) => {
      counters.done += duration;
      // This process is the server here: 300 ms of CPU in the kept (2-s) run.
      if (duration === 2) busy(300);
      return { requests: duration >= 2 ? (requests += 1) : 0, duration };
    },
    {
      pids: [process.pid, 2 ** 22 + 1],
      count: async () => {
        const before = { ...counters };
        return async () => minus({ ...counters }, before);
      },
      duration: 1,
      settle: async () => undefined,
      log: () => undefined,
    },
  );
  assert.equal(run.lengthenedTo, 2);
  assert.deepEqual(run.counted, { done: 2, other: 0 }, 'the kept run alone');
  // /proc counts in clock ticks (10 ms), around the run: the 300 ms, and what little else ran.
  assert.ok(run.cpuSeconds[0] >= 0.28 && run.cpuSeconds[0] < 0.6, `${run.cpuSeconds[0]} s`);
  assert.equal(run.cpuSeconds[1], undefined, 'a process that does not exist');
  assert.equal(cpuShare(run.cpuSeconds, 2), undefined, 'unknown when one is');
  assert.ok(Math.abs(cpuShare(run.cpuSeconds.slice(0, 1), 2) - run.cpuSeconds[0] / 2) < 1e-9);
  assert.equal(cpuShare([1], 0), undefined);
});
