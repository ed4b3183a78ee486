// The bench's peer servers (Express, Fastify, Elysia, Bun: bench/package.json) live in
// bench/node_modules, installed here on demand from bench/package-lock.json, so that the project's
// own install, its production image's build stage and `ng add` without --bench never download them.
// `npm run bench`, `npm run serve:ssr:bun` and the bench's tests call it; it does nothing when the
// installed tree matches the lockfile. `node bench/install.mjs` installs (or checks) by hand.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { takeLock } from '../scripts/lib/lock.mjs';

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

/**
 * Installs bench/node_modules from bench/package-lock.json unless it already matches; throws with
 * npm's output when the install fails.
 * @param {{ log?: (line: string) => void }} [options]
 */
export async function ensureBenchPackages({ log = (line) => console.error(line) } = {}) {
  if (installed()) return;
  const release = await takeLock(LOCK, {
    timeoutMs: INSTALL_TIMEOUT_MS,
    what: 'another install of bench/node_modules',
  });
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
    release();
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
