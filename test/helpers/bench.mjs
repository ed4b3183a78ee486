// `node bench/run.mjs …` as the bench's tests run it: output kept, stopped at a deadline.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';

const ROOT = join(import.meta.dirname, '../..');

/**
 * @param {string[]} args @param {number} timeoutMs @param {Record<string, string>} [env] added to this process's
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export function runBench(args, timeoutMs, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/run.mjs'), ...args], {
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
