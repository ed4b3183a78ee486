// A lock that one process of this machine holds at a time, for work two processes must not do at
// once (two builds into one dist/, two installs into one node_modules): a folder, made atomically,
// with its owner's pid inside. The others wait for it; a lock whose owner died (killed mid-build)
// is taken over. Processes of other machines or containers (other pid namespaces) are not seen.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 250;
/** A lock without a pid is being taken; still without one after this, its taker died taking it. */
const ORPHANED_AFTER_MS = 10_000;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

function readOr(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function statOr(path) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock at `path` (a folder), waiting while a live process holds it, for at most
 * `timeoutMs`; resolves with the function that releases it. `onWait(pid)` is called once, when it
 * starts waiting for that owner.
 * @param {string} path
 * @param {{ timeoutMs: number, what: string, onWait?: (pid: number) => void }} options
 * @returns {Promise<() => void>}
 */
export async function takeLock(path, { timeoutMs, what, onWait }) {
  const deadline = Date.now() + timeoutMs;
  /** A dead lock this process moved out of the way: removed after the next try (see takeOver). */
  let aside;
  let waitingFor;
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => {
        if (Number(readOr(join(path, 'pid'))) === process.pid)
          rmSync(path, { recursive: true, force: true });
      };
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
    } finally {
      if (aside) rmSync(aside, { recursive: true, force: true });
      aside = undefined;
    }
    const stats = statOr(path);
    if (!stats) continue; // released in the meantime
    const owner = Number(readOr(join(path, 'pid')));
    if (owner ? !alive(owner) : Date.now() - stats.mtimeMs > ORPHANED_AFTER_MS) {
      aside = takeOver(path, stats.ino);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: ${path} is still held by process ${owner || '(unknown)'} after ${Math.round(timeoutMs / 1000)} s. ` +
          `If no such process is at work, delete ${path} and try again.`,
      );
    }
    if (owner && owner !== waitingFor) {
      waitingFor = owner;
      onWait?.(owner);
    }
    await sleep(POLL_MS);
  }
}

/**
 * Moves the dead lock this process looked at (inode `ino`) out of the way. Another waiter may have
 * moved it first, and a new owner taken the lock since: then what moved is that live lock, which
 * goes straight back. The dead one stays aside until this process has tried to take the lock, so
 * the new lock cannot reuse its inode meanwhile and pass for it.
 * @returns {string | undefined} where the dead lock went
 */
function takeOver(path, ino) {
  const aside = `${path}.dead-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return undefined; // gone already
  }
  if (statOr(aside)?.ino === ino) return aside;
  try {
    renameSync(aside, path);
  } catch {
    rmSync(aside, { recursive: true, force: true });
  }
  return undefined;
}
