// `npm start` runs `ng serve` as npm's own child (exec), so stopping npm stops the dev server: a
// SIGTERM to npm (an IDE's stop button, a process manager) must not leave it listening.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort } from '../../scripts/lib/ports.mjs';
import { ROOT } from '../helpers/origin.mjs';

/** Whether something accepts connections on the port. */
const listening = (port) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function until(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let npm;
after(() => {
  // Whatever happened, leave nothing running: the whole process group.
  if (npm?.pid) {
    try {
      process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('npm start', () => {
  it('stops the dev server when npm gets SIGTERM', { timeout: 120_000 }, async () => {
    const port = await freePort();
    let output = '';
    npm = spawn('npm', ['start', '--', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    npm.stdout.on('data', (chunk) => (output += chunk));
    npm.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) =>
      npm.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await until(
      () => listening(port),
      90_000,
      `ng serve did not listen on ${port}:\n${output}`,
    ).catch((error) => {
      throw new Error(`${error.message}\n${output}`);
    });
    npm.kill('SIGTERM');
    await exited;
    await until(
      async () => !(await listening(port)),
      10_000,
      `port ${port} still open after npm exited: ng serve was left running`,
    );
  });
});
