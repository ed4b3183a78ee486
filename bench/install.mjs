// The bench's peer servers (Express, Fastify, Elysia, Bun: bench/package.json) live in
// bench/node_modules, installed here on demand from bench/package-lock.json, so that the project's
// own install, its production image's build stage and `ng add` without --bench never download them.
// `npm run bench`, `npm run serve:ssr:bun` and the bench's tests call it; it does nothing when the
// installed tree matches the lockfile. `node bench/install.mjs` installs (or checks) by hand.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const BENCH = import.meta.dirname;
export const BENCH_MODULES = join(BENCH, 'node_modules');
/** Bun's binary, from the `bun` package of bench/package.json. */
export const BUN = join(BENCH_MODULES, '.bin/bun');
/** Which lockfile the installed tree was made from: written last, so a broken install never matches. */
const STAMP = join(BENCH_MODULES, '.installed-from');
/** One install at a time (the bench and a test suite may start together); holds the owner's pid. */
const LOCK = join(BENCH, '.install.lock');
const INSTALL_TIMEOUT_MS = 10 * 60_000;

const lockfileHash = () =>
  createHash('sha256')
    .update(readFileSync(join(BENCH, 'package-lock.json')))
    .digest('hex');

const installed = () => existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lockfileHash();

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/** Takes the lock, waiting (bounded) for another install to finish; a dead owner's lock is taken over. */
async function lock() {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
    }
    const owner = Number(readFileSyncOr(join(LOCK, 'pid')));
    // A lock without a pid is being taken right now, or was by a process killed in that instant.
    const orphaned = !owner && Date.now() - (statSyncOr(LOCK)?.mtimeMs ?? 0) > 10_000;
    if ((owner && !alive(owner)) || orphaned) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline)
      throw new Error(`another install of bench/node_modules holds ${LOCK} (pid ${owner})`);
    else await sleep(250);
  }
}

function statSyncOr(path) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function readFileSyncOr(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Installs bench/node_modules from bench/package-lock.json unless it already matches; throws with
 * npm's output when the install fails.
 * @param {{ log?: (line: string) => void }} [options]
 */
export async function ensureBenchPackages({ log = (line) => console.error(line) } = {}) {
  if (installed()) return;
  await lock();
  try {
    if (installed()) return; // another process installed it while this one waited
    log(
      'Installing the bench peers into bench/node_modules (npm ci, from bench/package-lock.json)…',
    );
    // npm run sets npm_execpath: the same npm then, else the one on PATH.
    const npm = process.env['npm_execpath']
      ? [process.execPath, process.env['npm_execpath']]
      : ['npm'];
    const [command, ...args] = [...npm, 'ci', '--no-audit', '--no-fund', '--loglevel=error'];
    const result = spawnSync(command, args, {
      cwd: BENCH,
      encoding: 'utf8',
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.status !== 0) {
      throw new Error(
        `npm ci in bench/ failed (${result.error?.message ?? `exit ${result.status}`}):\n${`${result.stdout}${result.stderr}`.slice(-4000)}`,
      );
    }
    writeFileSync(STAMP, lockfileHash());
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  try {
    await ensureBenchPackages();
    console.error('bench/node_modules matches bench/package-lock.json.');
  } catch (error) {
    console.error(/** @type {Error} */ (error).message);
    process.exitCode = 1;
  }
}
