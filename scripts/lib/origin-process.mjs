// The production origin (<dist>/server/server.mjs) as a real process on a free loopback port.
import { join } from 'node:path';
import { startChild } from './child-process.mjs';
import { APP_DIST, ROOT } from './paths.mjs';
import { anyPortSetting, PORT_RANGE } from './ports.mjs';

/** What the origin prints once it listens; the port is the one it bound (PORT=0: any free one). */
const LISTENING = /listening on (https?):\/\/[^:]+:(\d+)/;

/**
 * How to start the origin. `dist` is the build to run (the app's by default); `command` replaces the
 * whole command line (e.g. `npm run serve:ssr`); `env` and the rest of the process setup still apply.
 * @typedef {{ env?: Record<string, string>, dist?: string, nodeArgs?: string[], executable?: string, command?: string[] }} OriginOptions
 */

/**
 * The origin process: any free loopback port, default hosts, output kept, and no drain window
 * (DRAIN_WINDOW_MS=0): nothing balances traffic to it, and every stop would wait the window. A
 * caller that tests the window sets it (`''` for the default).
 * @param {OriginOptions} options
 */
export function spawnOrigin({
  env,
  dist = APP_DIST,
  nodeArgs = [],
  executable = process.execPath,
  command,
}) {
  return startChild(command ?? [executable, ...nodeArgs, join(dist, 'server/server.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NG_ALLOWED_HOSTS: '',
      PORT: '0',
      HOST: '127.0.0.1',
      DRAIN_WINDOW_MS: '0',
      ...env,
    },
  });
}

/** Port variables the origin reads, where `0` means a port of its own pick. */
const PORT_VARIABLES = ['PORT', 'METRICS_PORT'];
/** What the origin says when a port it was given is taken (server/server.ts). */
const PORT_TAKEN = /(?:port|PORT) \d+ is in use/;

/**
 * Starts the origin and resolves once it listens. `stop()` sends SIGTERM (the origin drains, then
 * exits) and resolves with its exit code; a process that does not exit within 30 s is killed.
 * With TEST_PORT_RANGE, a port it would pick itself (unset PORT, or `0`) is one of that range
 * instead, and another is tried when someone took that one first.
 * @param {OriginOptions} [options]
 * @returns {Promise<{ exited: Promise<number | null>, pid: number, url: string, port: number, stdout: () => string, stderr: () => string, stop: () => Promise<number | null> }>}
 */
export async function startOrigin(options = {}) {
  for (let attempt = 1; ; attempt++) {
    const env = { PORT: '0', ...options.env };
    const picked = PORT_VARIABLES.filter((name) => env[name] === '0');
    for (const name of picked) env[name] = await anyPortSetting();
    const child = spawnOrigin({ ...options, env });
    let listening;
    try {
      listening = await child.waitFor(LISTENING, { stream: 'stdout', timeoutMs: 15_000 });
    } catch (error) {
      await child.stop({ graceMs: 0 });
      if (PORT_RANGE && picked.length > 0 && attempt < 3 && PORT_TAKEN.test(child.stderr()))
        continue;
      throw new Error(`origin ${error.message}:\n${child.stdout()}\n${child.stderr()}`, {
        cause: error,
      });
    }
    return started(child, listening[1], Number(listening[2]));
  }
}

/** @param {import('./child-process.mjs').Child} child @param {string} scheme @param {number} port */
function started(child, scheme, port) {
  return {
    exited: child.exited.then(({ code }) => code),
    pid: child.pid,
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    stdout: child.stdout,
    stderr: child.stderr,
    stop: async () => (await child.stop({ graceMs: 30_000 })).code,
  };
}
