// `npm test [-- suite …]`: runs the test suites (the package's `test:*` scripts) through `npm run`,
// in two lanes side by side: the suites that time the machine under load, one after the other, and
// every other suite beside them, one after the other; then the suites that need the machine to
// themselves, one at a time, with nothing beside them. It goes on after a failure: a failing suite
// never hides the ones after it. Each suite's output is passed on in one piece when it ends (the
// lanes' lines would otherwise interleave). Then a summary, and a last line `N passed, N failed`
// (N counts suites) that CI reads; the exit code is 1 when any suite failed or is missing.
// `npm test -- server browser` runs those suites only, `npm test -- quick` the quick ones, and
// `--serial` runs one suite at a time with its output as it comes.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

/** Every suite, in the order they start in their lane: the quick checks first, the slow scaffold last. */
export const SUITES = [
  'lint',
  'unit',
  'server',
  'localized',
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
 * Suites whose tests load servers flat out and judge what they measure (the origin's overload and
 * drain tests, the bench): two of them side by side would each take the other's CPU. They run one
 * after the other in a lane of their own; the other suites run beside them.
 */
export const TIMED_SUITES = ['server', 'bench'];

/**
 * Suites that run last, one after the other, with nothing beside them. The bench's smoke runs last
 * a second and must see pages rendered within it; the scaffold builds and installs three apps (the
 * most CPU of any suite) and waits for a dev server that compiles on demand. Beside the other lane,
 * each failed a clean-clone CI run for want of CPU (2026-12-07), not for what it checks.
 */
export const ALONE_SUITES = ['bench', 'scaffold'];

/** `npm test -- quick`: the suites that need no build, browser or load (about a minute). */
export const QUICK_SUITES = ['lint', 'unit', 'tools', 'schematics'];

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

/**
 * Runs `npm run test:<suite>`; resolves with how it ended. `live`: its output goes straight to the
 * terminal; otherwise it is kept and returned, to be printed in one piece.
 */
function runSuite(suite, { live }) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', `test:${suite}`], {
      stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ code: null, signal: null, error, output }));
    child.once('exit', (code, signal) => resolve({ code, signal, output }));
  });
}

/** Lines of a failed suite's own account of its failures, repeated under the summary. */
const FAILURE_LINES = 60;

/**
 * What node:test's reporter says under `✖ failing tests:` (each failing test, its error, and the
 * stack frames in the project's own files), without colours: repeated under the summary, where a
 * reader of a long run's last lines (a CI log's tail) sees why without the whole output.
 */
export function failuresOf(output) {
  const lines = [];
  let heading;
  let capturing = false;
  for (const line of stripVTControlCharacters(output).split('\n')) {
    if (line.startsWith('✖ failing tests:')) {
      capturing = true;
      // A command run once per engine (scripts/each-engine.mjs) says which one failed.
      lines.push(heading ? `${line} (${heading})` : line);
      continue;
    }
    if (line.startsWith('── ')) {
      heading = line.replaceAll('─', '').trim();
      capturing = false;
    }
    const noise =
      line.trim() === '' ||
      /node:internal|node_modules/.test(line) ||
      (/^\s+at /.test(line) && !/\/(test|server|scripts)\//.test(line));
    if (capturing && !noise) {
      lines.push(line);
    }
  }
  return lines.length > FAILURE_LINES
    ? [...lines.slice(0, FAILURE_LINES), `… and ${lines.length - FAILURE_LINES} more lines`]
    : lines;
}

/** `1m 05s` */
const minutes = (seconds) =>
  `${Math.floor(seconds / 60)}m ${String(Math.round(seconds % 60)).padStart(2, '0')}s`;

async function main(args) {
  const serial = args.includes('--serial');
  const names = args
    .filter((arg) => arg !== '--serial')
    .flatMap((name) => (name === 'quick' ? QUICK_SUITES : [name]));
  const unknown = names.filter((name) => !SUITES.includes(name));
  if (unknown.length > 0) {
    console.error(
      `Unknown suite ${unknown.join(', ')}: the suites are ${SUITES.join(', ')} (or quick: ${QUICK_SUITES.join(', ')}).`,
    );
    return 2;
  }
  const scripts =
    JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).scripts ?? {};
  // Named suites run in the usual order too.
  const selected = names.length > 0 ? SUITES.filter((suite) => names.includes(suite)) : SUITES;

  /** @type {Map<string, { suite: string, result: 'passed' | 'failed' | 'missing' | 'skipped' | 'interrupted', seconds?: number, note?: string, failures?: string[] }>} */
  const results = new Map();
  const runnable = [];
  for (const suite of selected) {
    if (scripts[`test:${suite}`] !== undefined) {
      runnable.push(suite);
      continue;
    }
    // A suite asked for by its own name is never skipped: its absence is news.
    const optional = args.includes(suite) ? undefined : OPTIONAL_SUITES[suite];
    results.set(
      suite,
      optional
        ? { suite, result: 'skipped', note: optional }
        : { suite, result: 'missing', note: `package.json has no "test:${suite}" script` },
    );
  }

  const beside = runnable.filter((suite) => !ALONE_SUITES.includes(suite));
  const lanes = serial
    ? [runnable]
    : [
        beside.filter((suite) => TIMED_SUITES.includes(suite)),
        beside.filter((suite) => !TIMED_SUITES.includes(suite)),
      ].filter((lane) => lane.length > 0);
  const alone = serial ? [] : runnable.filter((suite) => ALONE_SUITES.includes(suite));
  // With at most one lane nothing runs beside anything: each suite's output as it comes.
  const live = lanes.length <= 1;
  let interrupted = false;
  const started = performance.now();
  /** Runs a lane's suites one after the other. */
  const runLane = async (lane) => {
    for (const suite of lane) {
      if (interrupted) break;
      console.log(
        live ? `\n── npm run test:${suite} ──\n` : `── npm run test:${suite}: started ──`,
      );
      const suiteStarted = performance.now();
      const end = await runSuite(suite, { live });
      const seconds = (performance.now() - suiteStarted) / 1000;
      if (!live) {
        console.log(`\n── npm run test:${suite} (${seconds.toFixed(1)} s) ──\n`);
        process.stdout.write(end.output.endsWith('\n') ? end.output : `${end.output}\n`);
      }
      if (end.signal === 'SIGINT') {
        // Ctrl-C reached the suites as well: the user wants to stop, not to see the next ones.
        interrupted = true;
        results.set(suite, { suite, result: 'interrupted', seconds });
        break;
      }
      const note = end.error
        ? end.error.message
        : end.code === 0
          ? undefined
          : end.signal
            ? `killed by ${end.signal}`
            : `exit code ${end.code}`;
      results.set(suite, {
        suite,
        result: end.code === 0 ? 'passed' : 'failed',
        seconds,
        note,
        failures: end.code === 0 || live ? [] : failuresOf(end.output),
      });
    }
  };
  await Promise.all(lanes.map(runLane));
  await runLane(alone);
  const wallSeconds = (performance.now() - started) / 1000;

  const unlisted = Object.keys(scripts).filter(
    (name) => name.startsWith('test:') && !SUITES.includes(name.slice(5)),
  );
  const width = Math.max(...SUITES.map((suite) => suite.length));
  console.log('\n── summary ──\n');
  console.log(`${'suite'.padEnd(width)}  ${'result'.padEnd(11)}  seconds`);
  const rows = SUITES.map((suite) => results.get(suite)).filter((row) => row !== undefined);
  for (const { suite, result, seconds, note } of rows) {
    const time = seconds === undefined ? '-' : seconds.toFixed(1);
    console.log(
      `${suite.padEnd(width)}  ${result.padEnd(11)}  ${time.padStart(7)}${note ? `  ${note}` : ''}`,
    );
  }
  for (const { suite, failures = [] } of rows.filter((r) => r.failures?.length)) {
    console.log(`\n── what failed in ${suite} ──\n`);
    console.log(failures.join('\n'));
  }
  if (unlisted.length > 0)
    console.log(`\nNot run (not in scripts/run-tests.mjs): ${unlisted.join(', ')}`);
  const suiteSeconds = rows.reduce((sum, row) => sum + (row.seconds ?? 0), 0);
  console.log(
    `\nTook ${minutes(wallSeconds)}` +
      (live
        ? ''
        : ` (the suites' own times add up to ${minutes(suiteSeconds)}: ${lanes.length} lanes` +
          (alone.length > 0 ? `, then ${alone.join(', ')} alone)` : ')')),
  );
  const passed = rows.filter(({ result }) => result === 'passed').length;
  const failed = rows.filter(({ result }) => result !== 'passed' && result !== 'skipped').length;
  console.log(`\n${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

// Run as a script; imported (the template's tests read the lists), it only exports them.
if (process.argv[1] === import.meta.filename) process.exitCode = await main(process.argv.slice(2));
