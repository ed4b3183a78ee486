// bench/part-floor.mjs: the floor of a personal part's render (a bare renderApplication) beside the
// app's renderPart and a whole page, from a real short run; a bad flag is a clear error. No timing
// is asserted: only that every kind was measured and the ratios printed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { ROOT } from '../helpers/origin.mjs';

const script = join(ROOT, 'bench/part-floor.mjs');
const KINDS = ['bare', 'empty part', 'part', 'page'];

test(
  'part-floor measures a bare renderApplication, renderPart and a page, and prints the ratios',
  { skip: !readLoadPaths().personal && 'load-paths.json names no "personal" part' },
  () => {
    const run = spawnSync(process.execPath, [script, '--seconds', '2', '--rounds', '2', '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    for (const kind of KINDS)
      assert.match(
        run.stdout,
        new RegExp(`^  ${kind} +[\\d,]+ µs CPU, +[\\d,]+ µs wall per call`, 'm'),
      );
    for (const ratio of ['part ÷ bare', 'page ÷ part'])
      assert.match(run.stdout, new RegExp(`^  ${ratio}: [\\d.]+×$`, 'm'));
    const json = JSON.parse(run.stdout.trim().split('\n').at(-1));
    assert.equal(json.rounds, 2);
    for (const kind of KINDS) {
      assert.ok(json.result[kind].cpuUs > 0, kind);
      // Two rounds, each at least one call.
      assert.ok(json.result[kind].calls >= 2, kind);
    }
  },
);

test('part-floor refuses a bad --rounds', () => {
  const run = spawnSync(process.execPath, [script, '--rounds', 'two'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /--rounds a whole number/);
});
