// SIGTERM/SIGINT: readiness turns false, the process serves on for its drain window, then stops
// accepting, finishes what is in flight and exits 0. The helpers start origins without a window
// (scripts/lib/origin-process.mjs); the window's own tests set it.
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
import { once } from 'node:events';
import { connect as connectH2 } from 'node:http2';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readConfig } from '../../server/config.ts';
import {
  DIST,
  PROTOCOLS,
  ROOT,
  logLine,
  logLines,
  rawRequest,
  request,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

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
      // Past 10 s it asks all the same: the test's assertions say what it got.
      await waitFor(() => logLines(origin).some((line) => line.msg.startsWith('draining')), {
        what: 'draining line',
        timeoutMs: 10_000,
        everyMs: 10,
      }).catch(() => {});
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

  it('answers a connection accepted before the drain whose request comes after it, and closes one idle between requests', async () => {
    const origin = await startOrigin();
    const opened = async () => {
      const socket = connect({ host: '127.0.0.1', port: origin.port });
      await once(socket, 'connect');
      const received = [];
      socket.on('data', (chunk) => received.push(chunk));
      const closed = once(socket, 'close').then(() => Buffer.concat(received).toString('latin1'));
      return { socket, closed };
    };
    const silent = await opened();
    const idle = await opened();
    idle.socket.write('GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await waitFor(() => idle.socket.bytesRead > 0, { what: "the idle connection's first answer" });
    // Answered on a connection opened after both: the kernel hands connections over in order, so
    // the origin has accepted the silent one too, which has sent nothing yet.
    assert.equal((await request(origin.url, '/healthz')).status, 200);
    process.kill(origin.pid, 'SIGTERM');
    await logLine(origin, (line) => line.msg.startsWith('draining'), 'the draining line');
    silent.socket.write('GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const answer = await silent.closed;
    assert.match(answer, /^HTTP\/1\.1 200 /, 'the request sent after the drain began was reset');
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.match(
      await idle.closed,
      /^HTTP\/1\.1 200 /,
      'the idle connection is closed by the drain',
    );
    assert.equal(await origin.exited, 0);
  });

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

/**
 * The drain window as the origin reads it when DRAIN_WINDOW_MS is unset; that it covers the shipped
 * Varnish probe is test/deploy/varnish.test.mjs's to check.
 */
const DEFAULT_WINDOW_MS = readConfig({}).processes.drainWindowMs;
/** DRAIN_WINDOW_MS as the origin reads it unset: the helpers' `0` replaced by a blank value. */
const DEFAULT_WINDOW = { DRAIN_WINDOW_MS: '' };

/** Waits (up to 10 s) until the origin answers /readyz with 503: its drain window has begun. */
function untilUnready(origin) {
  return waitFor(async () => (await request(origin.url, '/readyz')).status === 503, {
    what: '503 from /readyz',
    timeoutMs: 10_000,
  });
}

/** The origin's exit code, once it exits (within 20 s, or it is killed and this throws). */
async function exitOf(origin) {
  const timer = setTimeout(() => process.kill(origin.pid, 'SIGKILL'), 20_000);
  const code = await origin.exited;
  clearTimeout(timer);
  assert.notEqual(code, null, 'still running 20 s later: killed');
  return code;
}

/** Whether the origin logged that it stopped accepting (the window's end). */
const stoppedAccepting = (origin, count = 1) =>
  logLines(origin).filter((line) => line.msg.startsWith('draining: no new connections')).length >=
  count;

/** One keep-alive HTTP/1.1 request over a connection of its own: its status and Connection header. */
async function keepAliveRequest(origin, path) {
  const { status, raw } = await rawRequest(
    origin.port,
    `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`,
  );
  return { status, closes: /\r\nConnection: close\r\n/i.test(raw) };
}

describe('the drain window (DRAIN_WINDOW_MS)', () => {
  for (const protocol of PROTOCOLS) {
    it(`by default, over ${protocol}: /readyz answers 503 at once while pages answer 200 on new connections, then the port refuses`, async () => {
      const origin = await startOrigin({ protocol, env: DEFAULT_WINDOW });
      // Over HTTP/2, a session opened before the signal: no GOAWAY until the window ends.
      const session =
        protocol === 'h2' ? connectH2(origin.url, { rejectUnauthorized: false }) : undefined;
      session?.on('error', () => undefined);
      const goaway = session && once(session, 'goaway');
      const onSession = (path) =>
        new Promise((resolve, reject) => {
          const stream = session.request({ ':path': path });
          stream.on('response', (headers) => resolve(headers[':status']));
          stream.on('error', reject);
          stream.resume();
        });
      if (session) assert.equal(await onSession('/healthz'), 200);

      process.kill(origin.pid, 'SIGTERM');
      await untilUnready(origin);
      // Inside the window now: the process has not stopped accepting.
      const window = logLines(origin).find((line) => line.msg.startsWith('drain window'));
      assert.equal(window?.drainWindowMs, DEFAULT_WINDOW_MS);
      assert.equal(stoppedAccepting(origin), false, 'the window ended before the test looked');
      for (const path of ['/products/21', '/favicon.ico', '/']) {
        assert.equal((await request(origin.url, path)).status, 200, path);
      }
      if (protocol === 'http/1.1') {
        // A keep-alive client is told to go: its next connection may go to another replica.
        assert.deepEqual(await keepAliveRequest(origin, '/products/22'), {
          status: 200,
          closes: true,
        });
      } else {
        assert.equal(await onSession('/products/23'), 200, 'a stream on the session of before');
      }
      assert.equal(
        stoppedAccepting(origin),
        false,
        'the window ended while the test asked: these answers prove nothing',
      );

      // Then it stops accepting, drains and exits; an HTTP/2 session gets its GOAWAY now.
      await goaway;
      session?.close();
      assert.equal(await exitOf(origin), 0);
      assert.equal(await refused(origin.port), true, 'still accepting connections');
      const messages = logLines(origin).map((line) => line.msg);
      const at = (prefix) => messages.findIndex((msg) => msg.startsWith(prefix));
      assert.ok(at('drain window') >= 0 && at('drain window') < at('draining: no new connections'));
      assert.ok(at('draining: no new connections') < messages.indexOf('drained, exiting'));
    });
  }

  it('by default under a cluster: every worker answers /readyz 503 and pages 200, then the port refuses', async () => {
    const origin = await startOrigin({ env: { ...DEFAULT_WINDOW, WORKERS: '2' } });
    await workersListening(origin, 2);
    const workers = logLines(origin)
      .filter((line) => line.msg.startsWith('Origin listening'))
      .map((line) => line.pid);
    // A terminal's Ctrl-C or systemd's stop reaches every process of the group, the workers beside
    // the primary: a worker's second signal (the primary's SIGTERM) must not end its window.
    for (const pid of workers) process.kill(pid, 'SIGINT');
    process.kill(origin.pid, 'SIGTERM');
    const unready = new Set();
    await waitFor(
      async () => {
        const res = await request(origin.url, '/readyz');
        if (res.status === 503) unready.add(JSON.parse(res.text).pid);
        return unready.size === 2;
      },
      { what: '503 from /readyz of both workers', timeoutMs: 10_000 },
    );
    const primary = logLines(origin).find((line) => line.msg === 'draining every worker');
    assert.equal(primary?.drainWindowMs, DEFAULT_WINDOW_MS);
    assert.equal(stoppedAccepting(origin), false, 'a worker ended its window early');
    // Connections go to the workers in turn: pages on two in a row, then who answers two in a row.
    for (let i = 0; i < 4; i++) {
      assert.equal((await request(origin.url, `/products/${40 + i}`)).status, 200);
    }
    const answeredBy = new Set();
    for (let i = 0; i < 4; i++) {
      const res = await request(origin.url, '/healthz');
      assert.equal(res.status, 200);
      answeredBy.add(JSON.parse(res.text).pid);
    }
    assert.equal(answeredBy.size, 2, 'both workers still took new connections');
    assert.equal(stoppedAccepting(origin), false, 'the window ended while the test asked');
    assert.equal(await exitOf(origin), 0);
    assert.equal(await refused(origin.port), true);
    assert.ok(stoppedAccepting(origin, 2));
    assert.ok(!logLines(origin).some((line) => line.msg === 'drain window ended early'));
  });

  it('ends at a second signal: the process stops accepting and exits without waiting it out', async () => {
    const origin = await startOrigin({ env: { DRAIN_WINDOW_MS: '600000' } });
    process.kill(origin.pid, 'SIGTERM');
    await untilUnready(origin);
    assert.equal((await request(origin.url, '/products/31')).status, 200);
    process.kill(origin.pid, 'SIGINT');
    // A ten-minute window: exiting at all proves it ended early.
    assert.equal(await exitOf(origin), 0);
    assert.equal(await refused(origin.port), true);
    const messages = logLines(origin).map((line) => line.msg);
    assert.ok(messages.includes('drain window ended early'));
    assert.ok(messages.includes('drained, exiting'));
  });

  it("ends at the cluster primary's second signal, in every worker", async () => {
    const origin = await startOrigin({ env: { DRAIN_WINDOW_MS: '600000', WORKERS: '2' } });
    await workersListening(origin, 2);
    process.kill(origin.pid, 'SIGTERM');
    await untilUnready(origin);
    process.kill(origin.pid, 'SIGTERM');
    assert.equal(await exitOf(origin), 0);
    const lines = logLines(origin);
    assert.equal(lines.filter((line) => line.msg === 'drain window ended early').length, 2);
    assert.ok(lines.some((line) => line.msg === 'every worker drained, exiting'));
  });
});
