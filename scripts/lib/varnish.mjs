// A real varnishd (Debian's varnish and varnish-modules, installed by `npm run setup:test`) in front
// of an origin on loopback, with the template's own VCL (deploy/varnish/): only the backend port, the
// one line an operator edits, and the build's inputs.vcl are the test's.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child-process.mjs';
import { ROOT } from './paths.mjs';
import { freePort } from './ports.mjs';

export const VARNISHD = process.env['VARNISHD_PATH'] ?? '/usr/sbin/varnishd';
export const DEFAULT_VCL = join(ROOT, 'deploy/varnish/default.vcl');

/**
 * Starts varnishd in front of `backendPort` with `defaultVcl` (the template's
 * deploy/varnish/default.vcl, or an app's copy) and `inputsVcl` (what deploy/varnish/inputs.mjs
 * makes of the origin's build); resolves once it answers.
 * @param {{ backendPort: number, inputsVcl: string, defaultVcl?: string }} options
 */
export async function startVarnish({ backendPort, inputsVcl, defaultVcl = DEFAULT_VCL }) {
  const dir = mkdtempSync(join(tmpdir(), 'origin-varnish-'));
  const vcl = readFileSync(defaultVcl, 'utf8').replace(
    /(backend origin \{[^}]*?\.port = ")\d+(")/,
    `$1${backendPort}$2`,
  );
  if (!vcl.includes(`.port = "${backendPort}"`)) {
    throw new Error(`${defaultVcl} has no backend port to point at the origin`);
  }
  writeFileSync(join(dir, 'default.vcl'), vcl);
  writeFileSync(join(dir, 'inputs.vcl'), inputsVcl);
  const port = await freePort();
  const child = startChild(
    [
      VARNISHD,
      '-F',
      '-j',
      'none',
      '-n',
      join(dir, 'work'),
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
  return {
    url,
    port,
    output: () => child.output(),
    stop: async () => {
      await child.stop({ graceMs: 0 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
