// Where and with what the numbers were measured: without this a table cannot be compared to another.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';
import { BUN } from '../install.mjs';
import { ROOT } from './variants.mjs';

function quiet(command, args) {
  try {
    return execFileSync(command, args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

export function describeMachine() {
  const list = cpus();
  const commit = quiet('git', ['rev-parse', '--short', 'HEAD']);
  const dirty = quiet('git', ['status', '--porcelain', '--untracked-files=no']);
  return {
    cpuModel: list[0]?.model?.trim() ?? 'unknown',
    cpus: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    node: process.version,
    bun: quiet(BUN, ['--version']),
    commit: commit ? `${commit}${dirty ? ' (with uncommitted changes)' : ''}` : undefined,
  };
}

/** Whether `taskset` can pin processes here. */
export function canPin() {
  return availableParallelism() >= 2 && quiet('taskset', ['-c', '0', 'true']) !== undefined;
}

/** Pins a running process (all its threads) to the given CPUs. */
export function pinProcess(pid, cpus) {
  return quiet('taskset', ['-a', '-p', '-c', cpus, String(pid)]) !== undefined;
}

function cpuTimes() {
  const fields = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  return { idle, steal: fields[7] ?? 0, total: fields.reduce((sum, value) => sum + value, 0) };
}

/**
 * Opens a window on all CPUs' time (/proc/stat); the returned function tells, since the call, the
 * share of CPU time spent on anything but idling (`busy`) and the share the hypervisor gave to other
 * guests (`steal`). Undefined where /proc/stat is missing.
 * @returns {() => { busy: number, steal: number } | undefined}
 */
export function startCpuWindow() {
  let before;
  try {
    before = cpuTimes();
  } catch {
    return () => undefined;
  }
  return () => {
    const after = cpuTimes();
    const total = after.total - before.total;
    return total > 0
      ? {
          busy: 1 - (after.idle - before.idle) / total,
          steal: (after.steal - before.steal) / total,
        }
      : undefined;
  };
}

/**
 * Share of all CPUs busy with something else during `ms`, measured before any server starts: the
 * load average would still count the build that may just have run.
 * @returns {Promise<number | undefined>} 0..1, undefined where /proc/stat is missing
 */
export async function measureBusyCpu(ms = 1000) {
  const sinceStart = startCpuWindow();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return sinceStart()?.busy;
}
