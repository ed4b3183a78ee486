// `node bench/run.mjs …` (or another of the bench's scripts) as the bench's tests run it: output
// kept, stopped at a deadline.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';

const ROOT = join(import.meta.dirname, '../..');

/**
 * Runs a bench script (`bench/run.mjs` unless `script` says which) until it exits or `timeoutMs`.
 * @param {string[]} args @param {number} timeoutMs
 * @param {{ env?: Record<string, string>, script?: string }} [options] `env` is added to this process's
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export function runBench(args, timeoutMs, { env = {}, script = 'bench/run.mjs' } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // SIGINT lets the runner take its servers (and Redis) down with it.
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The hooks of a suite that runs the bench once: before its tests `node bench/run.mjs …args --out
 * <a temporary folder>` (stopped at `timeoutMs`), after them the folder removed. Read the fields
 * inside the tests, once the hooks have set them: the run, its JSON report, a file it wrote by
 * extension. `setup(dir)` runs first, with the folder: it may write what the run reads there (as
 * `input-*`) and return variables to add to the run's environment.
 * @param {string[]} args @param {number} timeoutMs
 * @param {{ setup?: (dir: string) => Record<string, string> | void }} [options]
 */
export function benchRun(args, timeoutMs, { setup } = {}) {
  const session = {
    /** @type {string} */ out: '',
    /** @type {{ code: number | null, stdout: string, stderr: string }} */ run: undefined,
    /** @type {any} */ json: undefined,
    /** The name of the file the run wrote with this extension. */
    file: (/** @type {string} */ ext) =>
      readdirSync(session.out).find((name) => name.endsWith(ext) && !name.startsWith('input-')),
  };
  before(async () => {
    session.out = mkdtempSync(join(tmpdir(), 'bench-test-'));
    const env = setup?.(session.out) ?? {};
    session.run = await runBench([...args, '--out', session.out], timeoutMs, { env });
    const name = session.file('.json');
    session.json = name ? JSON.parse(readFileSync(join(session.out, name), 'utf8')) : undefined;
  });
  after(() => {
    if (session.out) rmSync(session.out, { recursive: true, force: true });
  });
  return session;
}

/**
 * Whether a short bench run may use up the pages of load-paths.json's rendered route: a cached
 * route with fewer pages than a smoke run asks for (a few thousand; the demo has 999,999 ids).
 * Then the origin's render cache answers repeats, and the bench refuses its ssr and mixed rows,
 * saying why (test/bench/short-route.test.mjs proves the refusal).
 */
export function renderedMayRunOut() {
  const rendered = readLoadPaths().rendered;
  return rendered?.cached === true && rendered.count < 100_000;
}

/** Whether a process with this pid still runs. */
export function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
