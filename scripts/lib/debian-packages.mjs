// Installs the Debian packages the tests need and npm cannot provide, with apt-get (as root, or
// through sudo). Shared by `npm run setup:test` (everything) and `npm run setup:browser` (Chromium).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { REDIS_SERVER } from './redis-server.mjs';
import { VARNISHD } from './varnish.mjs';

/** Where Debian puts varnish-modules' xkey for this machine's architecture. */
const XKEY =
  process.env['VARNISH_XKEY_PATH'] ??
  `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/varnish/vmods/libvmod_xkey.so`;

/** What the tests run, where they look for it, and the variable that points them elsewhere. */
export const NEEDED = {
  chromium: {
    path: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
    variable: 'CHROMIUM_PATH',
    why: 'the browser tests drive it through playwright-core',
  },
  'redis-server': {
    path: REDIS_SERVER,
    variable: 'REDIS_SERVER_PATH',
    why: 'the shared-cache tests and the bench start their own on a free port',
  },
  varnish: {
    path: VARNISHD,
    variable: 'VARNISHD_PATH',
    why: 'the CDN tests run deploy/varnish/ in front of the origin',
  },
  'varnish-modules': {
    path: XKEY,
    variable: 'VARNISH_XKEY_PATH',
    why: 'deploy/varnish/ tags pages with xkey, one of its modules',
  },
};

// Debian's packages start their service on install (redis-server would listen on 6379 for good).
// The tests start their own servers on free ports and must never find or depend on a system one:
// a policy-rc.d that says "no" (exit 101) keeps invoke-rc.d and deb-systemd-invoke from starting it.
const POLICY = '/usr/sbin/policy-rc.d';
const DENY_ALL =
  '#!/bin/sh\n# Written by setup-test for the length of its apt-get install.\nexit 101\n';

/**
 * Installs whichever of `names` (keys of NEEDED) is missing; returns an exit code and says why
 * on failure. Never leaves a service of them running.
 * @param {(keyof typeof NEEDED)[]} names
 */
export function ensureInstalled(names) {
  const missing = names.filter((name) => !existsSync(NEEDED[name].path));
  for (const name of names.filter((item) => !missing.includes(item)))
    console.log(`Found ${name}: ${NEEDED[name].path}`);
  if (missing.length === 0) return 0;
  const yourself = missing
    .map((name) => `${name} (${NEEDED[name].why}), then set ${NEEDED[name].variable}`)
    .join('; ');
  try {
    execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error(`No apt-get here: install ${yourself}.`);
    return 1;
  }
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (args) => {
    const [command, ...rest] = [...asRoot, ...args];
    const result = spawnSync(command, rest, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) throw new Error(`${args.join(' ')} failed`);
  };
  const ownPolicy = !existsSync(POLICY);
  try {
    if (ownPolicy)
      run(['sh', '-c', `printf '%s' '${DENY_ALL}' > ${POLICY} && chmod 755 ${POLICY}`]);
    run(['apt-get', 'update', '-qq']);
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]);
    // Under systemd the package also enables its unit for the next boot: not ours to leave on.
    if (missing.includes('redis-server') && existsSync('/run/systemd/system'))
      run(['systemctl', 'disable', '--now', 'redis-server']);
  } catch (error) {
    console.error(
      `Could not install ${missing.join(', ')} (${error.message}). Install ${yourself}.`,
    );
    return 1;
  } finally {
    if (ownPolicy) {
      const [command, ...args] = [...asRoot, 'rm', '-f', POLICY];
      spawnSync(command, args, { stdio: 'inherit' });
    }
  }
  const absent = missing.filter((name) => !existsSync(NEEDED[name].path));
  if (absent.length) {
    console.error(
      `Installed, yet not where the tests look: ${absent.map((name) => `${NEEDED[name].path} (set ${NEEDED[name].variable})`).join(', ')}.`,
    );
    return 1;
  }
  for (const name of missing) console.log(`Installed ${name}: ${NEEDED[name].path}`);
  return 0;
}
