// A real redis-server (Debian's package, installed by `npm run setup:test`) on a free loopback port
// in a temporary directory, for the tests and the bench: no persistence, nothing left behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child-process.mjs';
import { freePort } from './ports.mjs';

export const REDIS_SERVER = process.env['REDIS_SERVER_PATH'] ?? '/usr/bin/redis-server';

/**
 * Starts redis-server and resolves once it accepts connections. `stop()` kills it (SIGKILL by
 * default: a crash, as the failure tests want; `{ graceful: true }` for SIGTERM); `start()` brings it
 * back on the same port, as a restarted Redis would come back. `password` turns on AUTH.
 * @param {{ port?: number, password?: string }} [options]
 */
export async function startRedis({ port, password } = {}) {
  const chosenPort = port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'origin-redis-'));
  /** @type {import('./child-process.mjs').Child | undefined} */
  let child;
  const start = async () => {
    const args = [
      REDIS_SERVER,
      '--port',
      String(chosenPort),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      ...(password ? ['--requirepass', password] : []),
    ];
    child = startChild(args, { keep: 64 * 1024 });
    try {
      await child.waitFor(/Ready to accept connections/, { stream: 'stdout', timeoutMs: 10_000 });
    } catch (error) {
      await child.stop({ graceMs: 0 });
      throw new Error(`redis-server did not start: ${child.output()}`, { cause: error });
    }
  };
  await start();
  const credentials = password ? `:${encodeURIComponent(password)}@` : '';
  return {
    port: chosenPort,
    url: `redis://${credentials}127.0.0.1:${chosenPort}`,
    /** The running redis-server's pid (the bench pins it and reads its CPU time). */
    get pid() {
      return child?.pid;
    },
    start,
    /** @param {{ graceful?: boolean }} [options] */
    stop: async ({ graceful = false } = {}) => {
      await child?.stop({ graceMs: graceful ? 5000 : 0 });
    },
    close: async () => {
      await child?.stop({ graceMs: 0 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
