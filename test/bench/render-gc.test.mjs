// npm run profile:gc: the numbers it prints come from a real run, and a bad flag is a clear error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { ROOT } from '../helpers/origin.mjs';

const script = join(ROOT, 'scripts/render-gc.mjs');
/** The page it renders, as it names it: load-paths.json's rendered route (its value as N), or its prerendered page. */
const { rendered, prerendered } = readLoadPaths();
const page = rendered ? rendered.path.replace(/\{\w+\}/, 'N') : prerendered;
const escaped = page.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('profile:gc reports CPU, scavenges and survivors of a short run', () => {
  const run = spawnSync(process.execPath, [script, '--renders', '120'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const cpu = run.stdout.match(
    /CPU per render: +([\d.]+) ms \(main thread ([\d.]+) ms, other threads (-?[\d.]+) ms\)/,
  );
  assert.ok(cpu, run.stdout);
  assert.ok(
    Number(cpu[1]) > 0 && Number(cpu[2]) > 0 && Number(cpu[2]) <= Number(cpu[1]),
    run.stdout,
  );
  assert.match(run.stdout, new RegExp(`^120 renders of ${escaped}`, 'm'));
  assert.match(run.stdout, /full GCs: +\d+/);
  assert.match(
    run.stdout,
    /a second scavenge still promoted \d+ KB of it \(median of 5\); a full GC then freed \d+ KB of garbage in all/,
  );
});

test('profile:gc refuses a bad --renders', () => {
  const run = spawnSync(process.execPath, [script, '--renders', 'many'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /--renders needs a positive integer/);
});
