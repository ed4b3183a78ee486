// `npm test` (scripts/run-tests.mjs) in a scratch package whose suites pass or fail on demand: a
// failure does not stop the suites after it, the summary names each, the exit code says it failed,
// optional suites an app may lack are skipped and a required one that is missing fails the run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { OPTIONAL_SUITES, SUITES } from '../../scripts/run-tests.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';

const RUNNER = join(ROOT, 'scripts/run-tests.mjs');
const dirs = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A package whose test:<suite> scripts leave a mark and exit with the given code. */
function fakePackage(codes) {
  const dir = mkdtempSync(join(tmpdir(), 'run-tests-'));
  dirs.push(dir);
  const scripts = Object.fromEntries(
    Object.entries(codes).map(([suite, code]) => [
      `test:${suite}`,
      `node -e "require('fs').writeFileSync('ran-${suite}', ''); console.log('suite ${suite} here'); process.exit(${code})"`,
    ]),
  );
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'fake', private: true, scripts }),
  );
  return dir;
}

function runTests(dir, ...args) {
  const result = spawnSync(process.execPath, [RUNNER, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return { ...result, lastLine: result.stdout.trimEnd().split('\n').at(-1) };
}

/** The summary row of a suite: its result and note. */
const row = (stdout, suite) =>
  stdout
    .split('── summary ──')[1]
    .split('\n')
    .find((line) => line.startsWith(`${suite} `));

const required = SUITES.filter((suite) => !(suite in OPTIONAL_SUITES));

describe('npm test (scripts/run-tests.mjs)', () => {
  it('runs every suite after a failure, sums them up and exits 1', () => {
    const dir = fakePackage({
      ...Object.fromEntries(required.map((suite) => [suite, 0])),
      unit: 1,
      bench: 0,
    });
    const { status, stdout, lastLine } = runTests(dir);
    assert.equal(status, 1);
    for (const suite of [...required, 'bench'])
      assert.ok(existsSync(join(dir, `ran-${suite}`)), `${suite} ran`);
    assert.match(stdout, /suite server here/, "the suites' output is passed on");
    assert.match(row(stdout, 'unit'), /failed .*exit code 1/);
    assert.match(row(stdout, 'server'), /passed/);
    assert.match(row(stdout, 'bench'), /passed/);
    assert.match(row(stdout, 'browser'), /skipped .*--demo=false/);
    assert.equal(lastLine, `${required.length} passed, 1 failed`);
  });

  it('exits 0 when every suite passes, the optional ones it lacks skipped', () => {
    const dir = fakePackage(Object.fromEntries(required.map((suite) => [suite, 0])));
    const { status, stdout, lastLine } = runTests(dir);
    assert.equal(status, 0, stdout);
    for (const suite of Object.keys(OPTIONAL_SUITES)) assert.match(row(stdout, suite), /skipped/);
    assert.equal(lastLine, `${required.length} passed, 0 failed`);
  });

  it('fails when a required suite has no script (lint is never skipped)', () => {
    const dir = fakePackage(
      Object.fromEntries(required.filter((suite) => suite !== 'lint').map((suite) => [suite, 0])),
    );
    const { status, stdout, lastLine } = runTests(dir);
    assert.equal(status, 1);
    assert.match(row(stdout, 'lint'), /missing .*no "test:lint" script/);
    assert.equal(lastLine, `${required.length - 1} passed, 1 failed`);
  });

  it('runs only the suites named, and a named suite that is absent is missing', () => {
    const dir = fakePackage({ server: 0, tools: 0, lint: 0 });
    const { status, stdout, lastLine } = runTests(dir, 'tools', 'server', 'browser');
    assert.equal(status, 1);
    assert.ok(existsSync(join(dir, 'ran-server')) && existsSync(join(dir, 'ran-tools')));
    assert.ok(!existsSync(join(dir, 'ran-lint')), 'lint was not named');
    assert.match(row(stdout, 'browser'), /missing/);
    assert.equal(lastLine, '2 passed, 1 failed');
  });

  it('refuses a suite it does not know, naming the known ones', () => {
    const { status, stderr } = runTests(fakePackage({ server: 0 }), 'servr');
    assert.equal(status, 2);
    assert.match(stderr, /Unknown suite servr: the suites are lint, unit, server/);
  });
});
