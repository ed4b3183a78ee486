// The production origin (<dist>/server/server.mjs) as a real process on a free loopback port.
import { join } from 'node:path';
import { startChild } from './child-process.mjs';
import { APP_DIST, ROOT } from './paths.mjs';

/** What the origin prints once it listens; the port is the one it bound (PORT=0: any free one). */
const LISTENING = /listening on (https?):\/\/[^:]+:(\d+)/;

/**
 * How to start the origin. `dist` is the build to run (the app's by default); `command` replaces the
 * whole command line (e.g. `npm run serve:ssr`); `env` and the rest of the process setup still apply.
 * @typedef {{ env?: Record<string, string>, dist?: string, nodeArgs?: string[], executable?: string, command?: string[] }} OriginOptions
 */

/**
 * The origin process: any free loopback port, default hosts, output kept.
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
    env: { ...process.env, NG_ALLOWED_HOSTS: '', PORT: '0', HOST: '127.0.0.1', ...env },
  });
}

/**
 * Starts the origin and resolves once it listens. `stop()` sends SIGTERM (the origin drains, then
 * exits) and resolves with its exit code; a process that does not exit within 30 s is killed.
 * @param {OriginOptions} [options]
 * @returns {Promise<{ exited: Promise<number | null>, pid: number, url: string, port: number, stdout: () => string, stderr: () => string, stop: () => Promise<number | null> }>}
 */
export async function startOrigin(options = {}) {
  const child = spawnOrigin(options);
  let port;
  let scheme;
  try {
    const listening = await child.waitFor(LISTENING, { stream: 'stdout', timeoutMs: 15_000 });
    scheme = listening[1];
    port = Number(listening[2]);
  } catch (error) {
    await child.stop({ graceMs: 0 });
    throw new Error(`origin ${error.message}:\n${child.stdout()}\n${child.stderr()}`, {
      cause: error,
    });
  }
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
