// The runner's side of the load generator: one long-lived worker process (pinned to its CPU when
// pinning), one autocannon job at a time, each bounded by its duration plus a grace period.
import { join } from 'node:path';
import { spawnTracked } from '../../scripts/lib/child-process.mjs';
import { pinned, readCpuSeconds } from './process.mjs';

/**
 * @typedef {{ requests: number, duration: number, rps: number,
 *   latency: { p50: number, p99: number, avg: number, max: number }, bytes: number, errors: number,
 *   timeouts: number, mismatches: number, statusCodes: Record<string, number>, loadCpu: number,
 *   cacheHits?: number }} LoadResult (cacheHits: rotating pages a cache answered, load-worker.mjs)
 * @typedef {Omit<import('./load-worker.mjs').LoadJob, 'id'>} LoadOptions
 */

/** Seconds a job may overrun its duration before the worker is declared hung and killed. */
const GRACE_S = 20;

/**
 * @param {{ cpus?: string }} options
 * @returns {Promise<{ run: (job: LoadOptions) => Promise<LoadResult>, close: () => Promise<void>, pid: number }>}
 */
export async function startLoadGenerator({ cpus }) {
  const worker = join(import.meta.dirname, 'load-worker.mjs');
  const command = pinned([process.execPath, worker], cpus);
  const child = spawnTracked(command[0], command.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 1;
  /** @type {Map<number, { resolve: (result: LoadResult) => void, reject: (error: Error) => void }>} */
  const pending = new Map();
  const failAll = (error) => {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  child.on('exit', (code, signal) =>
    failAll(new Error(`the load generator exited (${signal ?? `code ${code}`})`)),
  );
  child.on('message', (message) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.type === 'result') waiter.resolve(message.result);
    else waiter.reject(new Error(`load generator: ${message.error}`));
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the load generator did not start in 15 s')),
      15_000,
    );
    child.once('message', (message) => {
      clearTimeout(timer);
      if (message.type === 'ready') resolve(undefined);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the load generator exited with ${code} while starting`));
    });
  });

  return {
    pid: child.pid ?? 0,
    run: (job) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(
          () => {
            pending.delete(id);
            child.kill('SIGKILL');
            reject(
              new Error(
                `the load generator did not finish a ${job.duration} s run in ${job.duration + GRACE_S} s`,
              ),
            );
          },
          (job.duration + GRACE_S) * 1000,
        );
        pending.set(id, {
          resolve: (result) => {
            clearTimeout(timer);
            resolve(result);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.send({ type: 'run', job: { ...job, id } });
      }),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The longest a measured run is made when shorter ones had no answer at all. */
export const LONGEST_RUN_S = 8;

/**
 * A measured run with answers in it. In a run shorter than one answer takes (a render on a starved
 * machine in a 1-s `--quick` run) nothing is answered and nothing is measured: once the server is
 * idle again, the run is made again twice as long, up to LONGEST_RUN_S, and says so. A run as long
 * as a default one (10 s) is never made again: no answer in it is the server's failure.
 * `once(duration)` makes one run with whatever it reads around it (CPU, counters), so the figures
 * kept are those of the last run alone.
 * @template {{ result: LoadResult }} T
 * @param {(duration: number) => Promise<T>} once
 * @param {{ duration: number, settle: () => Promise<unknown>, log: (line: string) => void }} options
 * @returns {Promise<T & { lengthenedTo?: number }>}
 */
export async function answeredRun(once, { duration, settle, log }) {
  let seconds = duration;
  let run = await once(seconds);
  while (run.result.requests === 0 && seconds * 2 <= LONGEST_RUN_S) {
    seconds *= 2;
    log(
      `    no answer in a ${seconds / 2}-s run: made again, ${seconds} s long, once the server is idle`,
    );
    await settle();
    run = await once(seconds);
  }
  return seconds === duration ? run : { ...run, lengthenedTo: seconds };
}

/**
 * A measured run (answeredRun) of `run`: its result, the CPU seconds each of `pids` spent in it
 * (undefined where /proc could not say), and what `count` counted over it (`count()` reads the
 * counters before and returns what reads them after); the figures are those of the last run alone.
 * @template C
 * @param {(duration: number) => Promise<LoadResult>} run
 * @param {{ pids: number[], count?: () => Promise<() => Promise<C>>, duration: number,
 *   settle: () => Promise<unknown>, log: (line: string) => void }} options
 * @returns {Promise<{ result: LoadResult, cpuSeconds: (number | undefined)[], counted: C | undefined, lengthenedTo?: number }>}
 */
export function measuredRun(run, { pids, count, ...options }) {
  return answeredRun(async (duration) => {
    const counting = await count?.();
    const before = pids.map(readCpuSeconds);
    const result = await run(duration);
    const after = pids.map(readCpuSeconds);
    const counted = await counting?.();
    const cpuSeconds = after.map((value, i) =>
      value === undefined || before[i] === undefined ? undefined : value - before[i],
    );
    return { result, cpuSeconds, counted };
  }, options);
}

/** The CPUs a run kept busy: all of `cpuSeconds` over the run's seconds; undefined if any is unknown. */
export function cpuShare(cpuSeconds, seconds) {
  return seconds > 0 && cpuSeconds.every((value) => value !== undefined)
    ? cpuSeconds.reduce((sum, value) => sum + value, 0) / seconds
    : undefined;
}

/** What counters read as numbers by name went up by between two readings. */
export const minus = (after, before) =>
  Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name]]));
