// `node bench/run.mjs …` (or another of the bench's scripts) as the bench's tests run it: output
// kept, stopped at a deadline.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

/** @returns {Promise<{ code: number | null, stdout: string, stderr: string }>} */
export function runBench(args, timeoutMs, script = 'bench/run.mjs') {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], {
      cwd: ROOT,
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

/** Whether a process with this pid still runs. */
export function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
