// `npm test [-- suite …]`: runs the test suites (the package's `test:*` scripts) one after the
// other through `npm run`, with their output as it comes, and goes on after a failure: a failing
// suite never hides the ones after it. Then a summary, and a last line `N passed, N failed` (N
// counts suites) that CI reads; the exit code is 1 when any suite failed or is missing.
// `npm test -- server browser` runs those suites only.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every suite, in the order they run: the quick checks first, the slow scaffold last. */
export const SUITES = [
  'lint',
  'unit',
  'server',
  'patches',
  'build',
  'deploy',
  'tools',
  'dev',
  'browser',
  'bench',
  'schematics',
  'scaffold',
];

/**
 * Suites an app made by `ng new` may not have: the scaffold removes the scripts of the parts it
 * leaves out (bench, demo and the template's own, in schematics/parts.json). Without its script such a suite is skipped,
 * and said so; any other suite without its script is missing, which fails the run.
 */
export const OPTIONAL_SUITES = {
  bench: 'not in this app (made with --bench=false)',
  browser: 'not in this app (made with --demo=false)',
  schematics: "the template's own tests",
  scaffold: "the template's own tests",
};

/** Runs `npm run test:<suite>` with the terminal as its output; resolves with how it ended. */
function runSuite(suite) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', `test:${suite}`], { stdio: 'inherit' });
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function main(args) {
  const unknown = args.filter((name) => !SUITES.includes(name));
  if (unknown.length > 0) {
    console.error(`Unknown suite ${unknown.join(', ')}: the suites are ${SUITES.join(', ')}.`);
    return 2;
  }
  const scripts =
    JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).scripts ?? {};
  // Named suites run in the usual order too.
  const selected = args.length > 0 ? SUITES.filter((suite) => args.includes(suite)) : SUITES;

  /** @type {{ suite: string, result: 'passed' | 'failed' | 'missing' | 'skipped' | 'interrupted', seconds?: number, note?: string }[]} */
  const results = [];
  for (const suite of selected) {
    if (scripts[`test:${suite}`] === undefined) {
      // A suite asked for by name is never skipped: its absence is news.
      const optional = args.length === 0 ? OPTIONAL_SUITES[suite] : undefined;
      results.push(
        optional
          ? { suite, result: 'skipped', note: optional }
          : { suite, result: 'missing', note: `package.json has no "test:${suite}" script` },
      );
      continue;
    }
    console.log(`\n── npm run test:${suite} ──\n`);
    const started = performance.now();
    const end = await runSuite(suite);
    const seconds = (performance.now() - started) / 1000;
    if (end.signal === 'SIGINT') {
      // Ctrl-C reached the suite as well: the user wants to stop, not to see the next suites.
      results.push({ suite, result: 'interrupted', seconds });
      break;
    }
    const note = end.error
      ? end.error.message
      : end.code === 0
        ? undefined
        : end.signal
          ? `killed by ${end.signal}`
          : `exit code ${end.code}`;
    results.push({ suite, result: end.code === 0 ? 'passed' : 'failed', seconds, note });
  }

  const unlisted = Object.keys(scripts).filter(
    (name) => name.startsWith('test:') && !SUITES.includes(name.slice(5)),
  );
  const width = Math.max(...SUITES.map((suite) => suite.length));
  console.log('\n── summary ──\n');
  console.log(`${'suite'.padEnd(width)}  ${'result'.padEnd(11)}  seconds`);
  for (const { suite, result, seconds, note } of results) {
    const time = seconds === undefined ? '-' : seconds.toFixed(1);
    console.log(
      `${suite.padEnd(width)}  ${result.padEnd(11)}  ${time.padStart(7)}${note ? `  ${note}` : ''}`,
    );
  }
  if (unlisted.length > 0)
    console.log(`\nNot run (not in scripts/run-tests.mjs): ${unlisted.join(', ')}`);
  const passed = results.filter(({ result }) => result === 'passed').length;
  const failed = results.filter(({ result }) => result !== 'passed' && result !== 'skipped').length;
  console.log(`\n${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

// Run as a script; imported (the template's tests read the lists), it only exports them.
if (process.argv[1] === import.meta.filename) process.exitCode = await main(process.argv.slice(2));
