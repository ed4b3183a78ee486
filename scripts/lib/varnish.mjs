// A real varnishd (Debian's varnish and varnish-modules, installed by `npm run setup:test`) in front
// of origins on loopback, with the template's own VCL (deploy/varnish/): only the backends, the lines
// an operator edits, and the build's inputs.vcl are the test's.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { inputsVcl } from '../../deploy/varnish/inputs.mjs';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { startChild } from './child-process.mjs';
import { ROOT } from './paths.mjs';
import { freePort } from './ports.mjs';

export const VARNISHD = process.env['VARNISHD_PATH'] ?? '/usr/sbin/varnishd';
/** Debian installs the management and statistics tools beside varnishd, in /usr/bin. */
const TOOLS = process.env['VARNISHD_PATH'] ? dirname(VARNISHD) : '/usr/bin';
export const DEFAULT_VCL = join(ROOT, 'deploy/varnish/default.vcl');

/** The shipped VCL's one backend, and its line in the director's list (vcl_init). */
const BACKEND = /^backend origin_1 \{\n[^}]*?\.port = "\d+";\n[^}]*\}\n/m;
const DIRECTOR_ENTRY = /^(\s*)origins\.add_backend\(origin_1\);\n/m;

/**
 * `defaultVcl` (deploy/varnish/default.vcl, or an app's copy) with one backend per port, `origin_1` to `origin_N` in that order, each
 * in the director, as an operator lists the replicas.
 * @param {number[]} ports
 */
export function vclFor(ports, defaultVcl = DEFAULT_VCL) {
  const vcl = readFileSync(defaultVcl, 'utf8');
  const backend = BACKEND.exec(vcl)?.[0];
  const entry = DIRECTOR_ENTRY.exec(vcl);
  if (backend === undefined || entry === null) {
    throw new Error(`${defaultVcl} has no backend origin_1 in the director to point at the origin`);
  }
  const named = (n) => (text) => text.replaceAll('origin_1', `origin_${n}`);
  const backends = ports.map((port, i) =>
    named(i + 1)(backend.replace(/\.port = "\d+"/, `.port = "${port}"`)),
  );
  const entries = ports.map((_, i) => named(i + 1)(entry[0]));
  return vcl.replace(BACKEND, backends.join('\n')).replace(DIRECTOR_ENTRY, entries.join(''));
}

/**
 * The inputs.vcl of a build: what deploy/varnish/inputs.mjs makes of its routes (a localized
 * build's first locale's: every locale has the same).
 * @param {string} dist
 */
export async function inputsVclOf(dist) {
  const [{ serverDir }] = (await readBuildDirs(dist)).locales;
  const { serverRoutes } = await import(pathToFileURL(join(serverDir, 'main.server.mjs')).href);
  return inputsVcl(serverRoutes);
}

/**
 * Starts varnishd in front of `backendPort` (or each of `backendPorts`, the replicas of a director)
 * with `defaultVcl` (the template's deploy/varnish/default.vcl, or an app's copy) and `inputsVcl`
 * (what deploy/varnish/inputs.mjs makes of the origin's build); resolves once it answers. `editVcl` changes the VCL first, for a measurement of
 * what a part of it is worth. `health()` reads what its probes say of each backend (`origin_1`…),
 * through varnishadm on the management port it opened on loopback.
 * @param {{ backendPort?: number, backendPorts?: number[], inputsVcl: string, defaultVcl?: string, editVcl?: (vcl: string) => string }} options
 */
export async function startVarnish({
  backendPort,
  backendPorts = [backendPort],
  inputsVcl,
  defaultVcl = DEFAULT_VCL,
  editVcl = (vcl) => vcl,
}) {
  if (backendPorts.length === 0 || backendPorts.some((port) => !Number.isInteger(port))) {
    throw new Error(`startVarnish: backend ports must be numbers, got ${backendPorts}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'origin-varnish-'));
  writeFileSync(join(dir, 'default.vcl'), editVcl(vclFor(backendPorts, defaultVcl)));
  writeFileSync(join(dir, 'inputs.vcl'), inputsVcl);
  const workDir = join(dir, 'work');
  const port = await freePort();
  const child = startChild(
    [
      VARNISHD,
      '-F',
      '-j',
      'none',
      '-n',
      workDir,
      '-a',
      `127.0.0.1:${port}`,
      '-f',
      join(dir, 'default.vcl'),
      '-s',
      'malloc,64m',
      // The management port on loopback too, and no more threads than a test needs.
      '-T',
      '127.0.0.1:0',
      '-p',
      'thread_pool_min=5',
    ],
    { keep: 64 * 1024 },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await child.waitFor(/Child starts/, { stream: 'output', timeoutMs: 20_000 });
  } catch (error) {
    await child.stop({ graceMs: 0 });
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`varnishd did not start: ${child.output()}`, { cause: error });
  }
  // -n finds the management port and its secret in the work folder.
  const tool = async (name, args) =>
    (await run(join(TOOLS, name), ['-n', workDir, ...args], { timeout: 10_000 })).stdout;
  return {
    url,
    port,
    /** Its -n folder, for varnishlog and varnishstat. */
    workDir,
    output: () => child.output(),
    /** Runs a management command (`backend.set_health origin_2 sick`); resolves with its output. */
    admin: (...args) => tool('varnishadm', args),
    /** Each backend's health as the probes (or an admin override) say: `{ origin_1: true, … }`. */
    health: async () => parseHealth(await tool('varnishadm', ['backend.list'])),
    /** What its shared-memory log holds so far, as `varnishlog -d` prints it with `args`. */
    log: (...args) => tool('varnishlog', ['-d', ...args]),
    /** A counter of varnishstat (`MAIN.backend_retry`). */
    counter: async (name) =>
      Number(JSON.parse(await tool('varnishstat', ['-1', '-j', '-f', name])).counters[name].value),
    stop: async () => {
      await child.stop({ graceMs: 0 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const run = promisify(execFile);

/**
 * `backend.list`'s table: `boot.origin_1  probe  3/3  healthy  …`, where an admin's `healthy` or
 * `sick` in the second column overrides the probe's word in the fourth.
 * @param {string} table
 */
function parseHealth(table) {
  const health = {};
  for (const [, name, admin, probed] of table.matchAll(
    /^\S+\.(origin_\d+)\s+(\S+)\s+\S+\s+(\S+)/gm,
  )) {
    health[name] =
      admin === 'probe' || admin === 'auto' ? probed === 'healthy' : admin === 'healthy';
  }
  return health;
}
