// Processes the tools and the tests start (the origin, the bench's servers and load generator):
// their output kept, a wait for the line that says they are ready, and none left running when
// this process ends, whatever way it ends. A leftover keeps a test file or the bench from ending
// and holds on to its port.
import { spawn } from 'node:child_process';

/** @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();

/** Kills every child still running; synchronous so that it also works from an 'exit' handler. */
export function killChildren() {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  running.clear();
}

let exitHookInstalled = false;

/**
 * `spawn`, for a child that is killed when this process exits.
 * @param {string} command @param {string[]} args @param {import('node:child_process').SpawnOptions} options
 */
export function spawnTracked(command, args, options) {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', killChildren);
  }
  const child = spawn(command, args, options);
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null }} Exit
 * @typedef {{
 *   pid: number,
 *   stdout: () => string, stderr: () => string, output: () => string,
 *   exited: Promise<Exit>, exit: () => Exit | undefined,
 *   waitFor: (pattern: RegExp, options: { timeoutMs: number, stream?: 'stdout' | 'stderr' | 'output' }) => Promise<RegExpExecArray>,
 *   stop: (options?: { graceMs?: number }) => Promise<Exit>,
 * }} Child
 */

/**
 * Starts `command` with its output piped and kept: each stream on its own and both interleaved
 * (`output`), the last `keep` characters of each (all by default; a chatty server must not grow
 * its parent).
 * @param {string[]} command
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, keep?: number }} [options]
 * @returns {Child}
 */
export function startChild(command, { cwd, env, keep = Infinity } = {}) {
  const child = spawnTracked(command[0], command.slice(1), {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const text = { stdout: '', stderr: '', output: '' };
  const append = (stream, chunk) => {
    text[stream] = (text[stream] + chunk).slice(-keep);
    text.output = (text.output + chunk).slice(-keep);
  };
  child.stdout?.on('data', (chunk) => append('stdout', chunk));
  child.stderr?.on('data', (chunk) => append('stderr', chunk));

  /** @type {Exit | undefined} */
  let exit;
  /** @type {Promise<Exit>} */
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve((exit ??= { code, signal })));
    // Could not start at all (no such command): no 'exit' follows.
    child.once('error', (error) => {
      append('stderr', `\n${error.message}`);
      resolve((exit ??= { code: null, signal: null }));
    });
  });

  /** Resolves with the first match of `pattern` in the output; rejects when the child exits first or time runs out. */
  function waitFor(pattern, { timeoutMs, stream = 'output' }) {
    const sources = stream === 'output' ? [child.stdout, child.stderr] : [child[stream]];
    return new Promise((resolve, reject) => {
      const finish = (settle, value) => {
        clearTimeout(timer);
        for (const source of sources) source?.off('data', check);
        settle(value);
      };
      // Listens after `append`, so the text already holds the chunk.
      const check = () => {
        const match = pattern.exec(text[stream]);
        if (match) finish(resolve, match);
      };
      const timer = setTimeout(
        () => finish(reject, new Error(`printed no ready line in ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      for (const source of sources) source?.on('data', check);
      exited.then(({ code, signal }) =>
        finish(reject, new Error(`exited (${signal ?? `code ${code}`}) before it was ready`)),
      );
      check();
    });
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`: stopping never hangs. */
  async function stop({ graceMs = 5_000 } = {}) {
    if (!exit) {
      child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    return /** @type {Exit} */ (exit);
  }

  return {
    pid: child.pid ?? 0,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    output: () => text.output,
    exited,
    exit: () => exit,
    waitFor,
    stop,
  };
}
