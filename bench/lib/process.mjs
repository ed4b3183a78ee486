// Server processes: start on a free loopback port, wait until they answer, read their CPU and
// memory, and make sure none outlives the bench, whatever way it ends (normal exit, Ctrl-C, error).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { killChildren, startChild } from '../../scripts/lib/child-process.mjs';
import { request } from '../../scripts/lib/http.mjs';
import { anyPortSetting, freePort } from '../../scripts/lib/ports.mjs';

let cleanupInstalled = false;
/** Installs the handlers that take every child down with the runner on a signal (exit: child-process.mjs). */
export function installCleanup() {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping every server and the load generator.\n`);
      killChildren();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}

/**
 * Wraps a command in `taskset -c <cpus>` when pinning; taskset execs the command, so the pid we get
 * is the server's own (needed for its memory figures).
 * @param {string[]} command @param {string | undefined} cpus
 */
export function pinned(command, cpus) {
  return cpus === undefined ? command : ['taskset', '-c', cpus, ...command];
}

/**
 * @typedef {{ pid: number, port: number, url: string, output: () => string,
 *   exited: () => { code: number | null, signal: string | null } | undefined, stop: () => Promise<void> }} RunningServer
 */

/**
 * Starts a server and resolves once it printed its ready line and answered an HTTP request
 * (`scheme: 'https'`: a server with TLS, asked over HTTP/2).
 * @param {{ command: string[], env: Record<string, string | undefined>, cwd: string, ready: RegExp, timeoutMs?: number, scheme?: 'http' | 'https' }} options
 * @returns {Promise<RunningServer>}
 */
export async function startServer({
  command,
  env,
  cwd,
  ready,
  timeoutMs = 30_000,
  scheme = 'http',
}) {
  // A free port now, which the variant binds a moment later (TEST_PORT_RANGE's, if set).
  const port = await freePort();
  // No drain window for the origin's variants: nothing balances traffic to them, and each stop
  // would wait it out (DRAIN_WINDOW_MS, docs/configuration.md); the peers ignore it.
  const childEnv = { DRAIN_WINDOW_MS: '0', ...process.env, ...env, PORT: String(port) };
  // A second port the variant would pick itself (origin-metrics): from the range too.
  if (childEnv['METRICS_PORT'] === '0') childEnv['METRICS_PORT'] = await anyPortSetting();
  for (const [name, value] of Object.entries(childEnv))
    if (value === undefined) delete childEnv[name];
  // Only the tail of the output matters (the reason it failed).
  const child = startChild(command, { cwd, env: childEnv, keep: 8_000 });
  const url = `${scheme}://127.0.0.1:${port}`;
  const server = {
    pid: child.pid,
    port,
    url,
    output: child.output,
    exited: child.exit,
    stop: async () => {
      await child.stop({ graceMs: 5_000 });
    },
  };

  const deadline = Date.now() + timeoutMs;
  try {
    await child.waitFor(ready, { timeoutMs });
    // The ready line says it listens; one answered request says it serves.
    for (;;) {
      const exit = child.exit();
      if (exit)
        throw new Error(
          `exited (${exit.signal ?? `code ${exit.code}`}) right after its ready line`,
        );
      try {
        await request(url, '/favicon.ico', { timeoutMs: 5_000 });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await server.stop();
    const tail = child.output().trim().split('\n').slice(-15).join('\n');
    throw new Error(`${error instanceof Error ? error.message : error}${tail ? `\n${tail}` : ''}`, {
      cause: error,
    });
  }
  return server;
}

/** Fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces). */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * `pid` and every process under it. A cluster's workers are the primary's children, and the server
 * is what they all are together: its CPU and memory are read over this tree.
 */
export function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(statFields(entry)[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited while we looked
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** Sums `read` over a process tree; undefined when the root itself cannot be read. */
function overTree(pid, read) {
  let total;
  for (const member of processTree(pid)) {
    const value = read(member);
    if (value === undefined) {
      if (member === pid) return undefined;
      continue;
    }
    total = (total ?? 0) + value;
  }
  return total;
}

/**
 * Peak resident memory since start or since the last reset, in bytes (VmHWM), summed over the
 * process and its children: for a cluster, the sum of each process's own peak.
 */
export function readPeakRss(pid) {
  return overTree(pid, (member) => {
    try {
      const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${member}/status`, 'utf8'));
      return match ? Number(match[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  });
}

/**
 * Resets VmHWM to the current RSS (Linux: "5" into /proc/<pid>/clear_refs) for the process and its
 * children, so the next reading is the peak of one run rather than of the processes' whole life.
 * False where that is not allowed.
 */
export function resetPeakRss(pid) {
  try {
    for (const member of processTree(pid)) writeFileSync(`/proc/${member}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

let clockTicks;
/** CPU seconds (user + system, all threads) a process and its live children have used so far. */
export function readCpuSeconds(pid) {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return overTree(pid, (member) => {
    try {
      const fields = statFields(member);
      return (Number(fields[11]) + Number(fields[12])) / clockTicks;
    } catch {
      return undefined;
    }
  });
}

/**
 * Waits until the given processes are idle together (under `threshold` of one CPU over a short
 * window). A load run ends with requests still in flight, and an SSR server keeps rendering them
 * after autocannon has hung up: the next run, of this variant or of another one on the same CPU,
 * must not start while that work still eats its CPU.
 * @param {number[]} pids
 * @returns {Promise<{ waitedMs: number, settled: boolean }>}
 */
export async function waitUntilIdle(
  pids,
  { threshold = 0.05, windowMs = 100, maxMs = 10_000 } = {},
) {
  const started = Date.now();
  const total = () => pids.reduce((sum, pid) => sum + (readCpuSeconds(pid) ?? 0), 0);
  let before = total();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const after = total();
    if ((after - before) / (windowMs / 1000) < threshold)
      return { waitedMs: Date.now() - started, settled: true };
    if (Date.now() - started > maxMs) return { waitedMs: Date.now() - started, settled: false };
    before = after;
  }
}
