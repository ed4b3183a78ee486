// SIGTERM/SIGINT: stop accepting, finish what is in flight, exit 0; readiness turns false.
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIST, ROOT, logLines, rawRequest, request, startOrigin } from '../helpers/origin.mjs';

/** N pipelined renders on one connection: work that is surely in flight when the signal comes. */
function pipelined(count) {
  return Array.from(
    { length: count },
    (_, i) => `GET /products/${1000 + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
  ).join('');
}

/**
 * Sends `signal` once the first bytes arrive, then asks for `path` on the same connection once the
 * origin has logged that it drains, while ~290 renders are still to come. A fact, not a count: a
 * client that reads late (a busy machine) sees many answers at once, and a request written after
 * "five more answers" then raced the signal (seen: /readyz answered 200).
 */
function signalThenAsk(origin, signal, path) {
  return (socket) => {
    socket.once('data', async () => {
      process.kill(origin.pid, signal);
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(10)) {
        if (logLines(origin).some((line) => line.msg.startsWith('draining'))) break;
      }
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    });
  };
}

/**
 * A project folder with the given package.json scripts, this project's scripts/ensure-build.mjs
 * (which finds dist/ up to date: the copy is newer than server/, the only one of its inputs there)
 * and compress-build.mjs (with the server/ modules it runs, linked), its node_modules, and the
 * tests' app build as dist/ (copied: a symlinked server.mjs would not know it is the main module).
 */
function scratchProject(projectScripts) {
  const project = join(ROOT, 'test-results', `npm-scripts-${process.pid}-${Date.now()}`);
  mkdirSync(join(project, 'scripts/lib'), { recursive: true });
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'npm-scripts', private: true, type: 'module', scripts: projectScripts }),
  );
  for (const file of [
    'ensure-build.mjs',
    'compress-build.mjs',
    'lib/lock.mjs',
    'lib/newest-mtime.mjs',
    'lib/paths.mjs',
  ]) {
    cpSync(join(ROOT, 'scripts', file), join(project, 'scripts', file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  symlinkSync(join(ROOT, 'server'), join(project, 'server'), 'dir');
  if (Object.values(projectScripts).some((script) => script.includes('bench/'))) {
    // serve:ssr:bun checks the bench's install (bench/install.mjs), then runs its Bun.
    mkdirSync(join(project, 'bench'));
    for (const file of ['install.mjs', 'package.json', 'package-lock.json'])
      cpSync(join(ROOT, 'bench', file), join(project, 'bench', file));
    symlinkSync(join(ROOT, 'bench/node_modules'), join(project, 'bench/node_modules'), 'dir');
  }
  cpSync(DIST, join(project, 'dist'), { recursive: true });
  // The tests' app's build says it was built as `test-app` (ensure-build.mjs keeps that record):
  // as the project's dist/ it is a build made by hand, taken as it is while fresh.
  rmSync(join(project, 'dist', 'ensure-build.json'), { force: true });
  return project;
}

/** Whether `pid` is still the server of the scratch `project` (run there, where /proc says so). */
function stillServer(pid, project) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === project;
  } catch {
    return !existsSync('/proc/self'); // no /proc here: alive is all that can be known
  }
}

const refused = (port) =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (error) => resolve(error.code === 'ECONNREFUSED'));
  });

describe('graceful shutdown', () => {
  it('answers liveness and readiness while serving', async () => {
    const origin = await startOrigin();
    try {
      for (const path of ['/healthz', '/readyz']) {
        const res = await request(origin.url, path, { headers: { host: '10.1.2.3:8080' } });
        assert.equal(res.status, 200, path);
        assert.equal(JSON.parse(res.text).status, 'ok');
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    } finally {
      await origin.stop();
    }
  });

  // The last request on the draining connection: readiness, or a file step 0 would answer from
  // memory (origin.ts) were it not draining; either answer must close the connection.
  for (const [signal, path, status] of [
    ['SIGTERM', '/readyz', 503],
    ['SIGINT', '/favicon.ico', 200],
  ]) {
    it(`on ${signal}: finishes in-flight requests, refuses new ones, answers ${path} with ${status} and Connection: close, exits 0`, async () => {
      const origin = await startOrigin({
        env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
      });
      const inFlight = rawRequest(origin.port, pipelined(300), {
        timeoutMs: 30_000,
        afterWrite: signalThenAsk(origin, signal, path),
      });
      const { responses } = await inFlight;
      const code = await origin.exited;
      assert.equal(code, 0);
      const statuses = responses.map((response) => Number(response.slice(9, 12)));
      assert.equal(statuses.length, 301, 'requests were lost');
      assert.deepEqual(statuses.slice(0, 300), Array(300).fill(200));
      assert.equal(statuses[300], status);
      if (path === '/readyz') {
        assert.match(
          responses[300],
          /"status":"draining"/,
          'readiness did not turn false while draining',
        );
      }
      assert.match(responses[300], /Connection: close/i);
      assert.equal(await refused(origin.port), true, 'still accepting connections');
      const messages = logLines(origin).map((line) => line.msg);
      assert.ok(messages.some((msg) => msg.startsWith('draining')));
      assert.ok(messages.includes('drained, exiting'));
    });
  }

  // Docker and Kubernetes signal only the container's first process. npm passes the signal to the
  // shell running the script, and a shell waiting on a child dies without passing it on: unless the
  // script execs the server, the server never hears it and is killed mid-request when the
  // container goes.
  // The scripts run as written in package.json, through npm, in a scratch project whose dist/ is
  // the tests' app build: so this needs no app in src/ (the real script would build it first).
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
  for (const script of ['serve:ssr', 'serve:ssr:bun']) {
    const skip = scripts[script] ? false : `this project has no ${script} script`;
    it(
      `SIGTERM to \`npm run ${script}\` reaches the server: in-flight requests finish, it exits`,
      { skip },
      async () => {
        // Installed here first (the bench's own packages), so the copy's check finds it done.
        if (scripts[script].includes('bench/'))
          await (await import('../../bench/install.mjs')).ensureBenchPackages();
        const project = scratchProject({ [script]: scripts[script] });
        // npm sets npm_execpath for the scripts it runs (npm test); run directly, use the npm on PATH.
        const npm = process.env.npm_execpath
          ? [process.execPath, process.env.npm_execpath]
          : ['npm'];
        const origin = await startOrigin({
          command: [...npm, 'run', '--silent', '--prefix', project, script],
          env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
        });
        // The server's own pid (pino logs it): an orphaned server must not outlive the test.
        const serverPid = logLines(origin)[0].pid;
        try {
          const { responses } = await rawRequest(origin.port, pipelined(50), {
            timeoutMs: 30_000,
            afterWrite: (socket) => socket.once('data', () => process.kill(origin.pid, 'SIGTERM')),
          });
          const code = await origin.exited;
          // Every request answered in full, whatever the app renders at these paths (a page or its 404).
          const statuses = responses.map((response) => Number(response.slice(9, 12)));
          assert.equal(statuses.length, 50, 'in-flight requests were lost');
          assert.ok(
            statuses.every((status) => status === statuses[0] && [200, 404].includes(status)),
            `answers: ${statuses.join(' ')}`,
          );
          assert.equal(
            await refused(origin.port),
            true,
            'the server outlived npm: the signal never reached it',
          );
          assert.ok(logLines(origin).some((line) => line.msg === 'drained, exiting'));
          assert.equal(code, 0);
        } finally {
          // Only while that pid is still this server: once it exited, the pid may be another
          // process's (other suites run beside this one).
          if (stillServer(serverPid, project)) process.kill(serverPid, 'SIGKILL');
          rmSync(project, { recursive: true, force: true });
        }
      },
    );
  }

  it('cuts what is left and exits 1 when the grace period runs out', async () => {
    const origin = await startOrigin({
      env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000', SHUTDOWN_GRACE_MS: '50' },
    });
    const { responses } = await rawRequest(origin.port, pipelined(300), {
      timeoutMs: 30_000,
      afterWrite: (socket) => socket.once('data', () => process.kill(origin.pid, 'SIGTERM')),
    });
    assert.equal(await origin.exited, 1);
    assert.ok(responses.length < 301, 'everything finished within 50 ms: the test proves nothing');
    assert.ok(logLines(origin).some((line) => line.msg.startsWith('grace period over')));
  });
});
