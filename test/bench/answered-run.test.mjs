// answeredRun (bench/lib/load.mjs): a measured run with no answer in it is made again, longer, after
// the server settled, and only the last run's figures are kept; a default-length run never is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answeredRun, LONGEST_RUN_S } from '../../bench/lib/load.mjs';

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
