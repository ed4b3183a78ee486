// `npm test` (scripts/run-tests.mjs) in a scratch package whose suites pass or fail on demand: a
// failure does not stop the suites after it, the summary names each, the exit code says it failed,
// optional suites an app may lack are skipped and a required one that is missing fails the run;
// the timed suites never run beside each other, the others run beside them, the ones that need the
// machine run last, alone; quick and --serial.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  ALONE_SUITES,
  OPTIONAL_SUITES,
  QUICK_SUITES,
  SUITES,
  TIMED_SUITES,
} from '../../scripts/run-tests.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';

const RUNNER = join(ROOT, 'scripts/run-tests.mjs');
const dirs = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * A package whose test:<suite> scripts take `ms`, then leave a mark (when they ran, from and to, in
 * ms since the epoch) and exit with the given code.
 */
function fakePackage(codes, ms = 0) {
  const dir = mkdtempSync(join(tmpdir(), 'run-tests-'));
  dirs.push(dir);
  const scripts = Object.fromEntries(
    Object.entries(codes).map(([suite, code]) => [
      `test:${suite}`,
      `node -e "const from = Date.now(); setTimeout(() => { require('fs').writeFileSync('ran-${suite}', from + ' ' + Date.now()); console.log('suite ${suite} here'); process.exit(${code}); }, ${ms})"`,
    ]),
  );
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'fake', private: true, scripts }),
  );
  return dir;
}

function runTests(dir, ...args) {
  // Not a child of this test run: a node --test inside reports as a run of its own.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const result = spawnSync(process.execPath, [RUNNER, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...env, npm_config_update_notifier: 'false' },
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

  it("repeats under the summary what node:test said of each failing test, and which engine's run it was", () => {
    const dir = fakePackage({ server: 0 });
    writeFileSync(
      join(dir, 'fails.test.mjs'),
      "import assert from 'node:assert/strict';\nimport { it } from 'node:test';\n" +
        "it('passes', () => {});\nit('adds up', () => assert.equal(1 + 1, 3, 'the reason it failed'));\n",
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    pkg.scripts['test:unit'] =
      'node -e "console.log(\'── RENDER_ENGINE=app ──\')" && node --test --test-reporter=spec fails.test.mjs';
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
    // Two lanes (as in a whole run): each suite's output is kept, and printed when it ends.
    const { status, stdout } = runTests(dir, 'server', 'unit');
    assert.equal(status, 1);
    const [, failures] = stdout.split('── what failed in unit ──');
    assert.ok(failures, stdout);
    assert.match(failures, /✖ failing tests: \(RENDER_ENGINE=app\)/);
    assert.match(failures, /adds up/);
    assert.match(failures, /the reason it failed/);
    assert.match(failures, /fails\.test\.mjs:4/, 'the stack frame in the test itself');
    assert.doesNotMatch(failures, /node:internal/);
    assert.ok(!failures.includes('\u001b'), 'no colours');
    assert.doesNotMatch(failures, /✔ passes/);
    assert.doesNotMatch(stdout, /what failed in server/);
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

  it('runs the timed suites one after the other, the others beside them, then the ones that need the machine alone', () => {
    const dir = fakePackage(Object.fromEntries(SUITES.map((suite) => [suite, 0])), 400);
    const { status, stdout } = runTests(dir);
    assert.equal(status, 0, stdout);
    const span = (suite) =>
      readFileSync(join(dir, `ran-${suite}`), 'utf8')
        .split(' ')
        .map(Number);
    const overlap = (a, b) => span(a)[0] < span(b)[1] && span(b)[0] < span(a)[1];
    assert.ok(TIMED_SUITES.length >= 2);
    for (const a of TIMED_SUITES)
      for (const b of TIMED_SUITES)
        if (a !== b) assert.ok(!overlap(a, b), `${a} and ${b} ran at once`);
    const beside = SUITES.filter(
      (suite) =>
        !TIMED_SUITES.includes(suite) && TIMED_SUITES.some((timed) => overlap(suite, timed)),
    );
    assert.ok(beside.length > 0, 'no suite ran beside the timed ones');
    // The suites that need the machine to themselves ran last, beside nothing.
    assert.ok(ALONE_SUITES.length > 0);
    for (const suite of ALONE_SUITES) {
      for (const other of SUITES.filter((name) => name !== suite))
        assert.ok(!overlap(suite, other), `${suite} ran beside ${other}`);
      assert.ok(
        SUITES.filter((name) => !ALONE_SUITES.includes(name)).every(
          (name) => span(name)[1] <= span(suite)[0],
        ),
        `${suite} ran before the lanes ended`,
      );
    }
    // Each suite's output in one piece, under its own heading.
    assert.match(stdout, /── npm run test:server \([\d.]+ s\) ──\n[\s\S]*?suite server here/);
    assert.match(
      stdout,
      /^Took \d+m \d\ds \(the suites' own times add up to \d+m \d\ds: 2 lanes, then bench, scaffold alone\)$/m,
    );
  });

  it('quick runs the quick suites; --serial runs one suite at a time', () => {
    const dir = fakePackage(Object.fromEntries(SUITES.map((suite) => [suite, 0])), 200);
    const quick = runTests(dir, 'quick');
    assert.equal(quick.status, 0, quick.stdout);
    assert.deepEqual(
      SUITES.filter((suite) => existsSync(join(dir, `ran-${suite}`))),
      QUICK_SUITES,
    );
    // In an app, which has no schematics suite: skipped, as when every suite runs.
    const app = fakePackage({ lint: 0, unit: 0, tools: 0 });
    const appQuick = runTests(app, 'quick');
    assert.equal(appQuick.status, 0, appQuick.stdout);
    assert.match(row(appQuick.stdout, 'schematics'), /skipped/);
    const serialDir = fakePackage({ lint: 0, server: 0, bench: 0, unit: 0 }, 200);
    const serial = runTests(serialDir, '--serial', 'lint', 'server', 'bench', 'unit');
    assert.equal(serial.status, 0, serial.stdout);
    const spans = ['lint', 'unit', 'server', 'bench'].map((suite) =>
      readFileSync(join(serialDir, `ran-${suite}`), 'utf8')
        .split(' ')
        .map(Number),
    );
    for (let i = 1; i < spans.length; i++)
      assert.ok(spans[i][0] >= spans[i - 1][1], 'one at a time, in the usual order');
  });

  it('refuses a suite it does not know, naming the known ones', () => {
    const { status, stderr } = runTests(fakePackage({ server: 0 }), 'servr');
    assert.equal(status, 2);
    assert.match(stderr, /Unknown suite servr: the suites are lint, unit, server/);
  });
});
