// Render faults, slow renders, clients that leave, and errors outside any request.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeProduct } from '../app/src/app/products.ts';
import {
  DIST,
  ENGINE,
  ROOT,
  logLines,
  rawRequest,
  request,
  startOrigin,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const STACK = /\n\s+at |node_modules|chunk-|\.mjs/;

/** The origin's render load from /healthz, once nothing runs or waits (polled for up to 5 s). */
async function rendersOnceIdle(origin) {
  let renders;
  await waitFor(
    async () => {
      renders = JSON.parse((await request(origin.url, '/healthz')).text).renders;
      return renders.running === 0 && renders.queued === 0;
    },
    {
      what: 'idle renders',
      timeoutMs: 5_000,
      everyMs: 50,
      seen: () => `/healthz renders: ${JSON.stringify(renders)}`,
    },
  );
  // What is still running or queued (renders.started counts every render this process began).
  return {
    running: renders.running,
    queued: renders.queued,
    backgroundQueued: renders.backgroundQueued,
  };
}

describe('an exception during render', () => {
  // A real build whose document lacks <app-root>: bootstrapping the app throws on every render.
  const brokenDist = join(ROOT, 'test-results', `dist-broken-${process.pid}`);
  let origin;
  before(async () => {
    cpSync(DIST, brokenDist, { recursive: true });
    // CommonEngine reads the document from the file; Angular's engine from its copy in the bundle.
    for (const file of ['index.server.html', 'assets-chunks/index_server_html.mjs']) {
      const documentFile = join(brokenDist, 'server', file);
      const document = readFileSync(documentFile, 'utf8');
      assert.ok(document.includes('<app-root></app-root>'), file);
      writeFileSync(documentFile, document.replace('<app-root></app-root>', ''));
    }
    origin = await startOrigin({ dist: brokenDist });
  });
  after(async () => {
    await origin?.stop();
    rmSync(brokenDist, { recursive: true, force: true });
  });

  it('answers 500 with a static page and no stack, and logs one line', async () => {
    const res = await request(origin.url, '/products/5');
    assert.equal(res.status, 500);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(res.text.includes('Something went wrong'));
    assert.ok(!STACK.test(res.text), res.text);
    await sleep(50);
    const errors = logLines(origin).filter((line) => line.level >= 50);
    assert.equal(errors.length, 1, origin.stdout());
    assert.equal(errors[0].msg, 'request failed');
    assert.equal(errors[0].url, '/products/5');
    assert.match(errors[0].err.message, /NG05104/, 'the log line names the error');
    assert.equal(origin.stderr(), '', 'something wrote unstructured output');
  });

  it('keeps serving what does not need a render, and keeps failing cleanly', async () => {
    assert.equal((await request(origin.url, '/')).status, 200);
    assert.equal((await request(origin.url, '/favicon.ico')).status, 200);
    assert.equal((await request(origin.url, '/products/6')).status, 500);
  });
});

describe('a page that throws while rendering (test/app/src/app/pages/throws.ts)', () => {
  // The engines differ here (docs/choosing-an-engine.md). CommonEngine: Angular's ErrorHandler
  // takes the error and the render completes without the page's content; the origin passes on what
  // was rendered (200) and logs what the app wrote to the console as a warning. Angular's engine:
  // the route's navigation failed, so it renders no page; the origin answers 500 with its static
  // page and logs the failure once, with what the app wrote to the console.
  const rendersAroundErrors = ENGINE === 'common';
  const status = rendersAroundErrors ? 200 : 500;
  /** The log lines about /throws: warnings (CommonEngine) or errors (Angular's engine). */
  const reports = (origin) =>
    logLines(origin).filter((line) => line.level >= (rendersAroundErrors ? 40 : 50));
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.stop();
  });

  it('is reported by Angular, not the client: one log line per render with its URL and the error', async () => {
    const res = await request(origin.url, '/throws');
    assert.equal(res.status, status);
    assert.ok(!res.text.includes('this page throws'), 'the error reached the client');
    // (Not STACK: the page links its chunk-*.js files.)
    assert.doesNotMatch(res.text, /\n\s+at |node_modules|\.mjs/, 'a stack reached the client');
    if (!rendersAroundErrors) {
      assert.ok(res.text.includes('Something went wrong'), res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    await sleep(50);
    const lines = reports(origin);
    assert.equal(lines.length, 1, origin.stdout());
    assert.equal(
      lines[0].msg,
      rendersAroundErrors ? 'the app wrote to the console while rendering' : 'request failed',
    );
    assert.equal(new URL(lines[0].url, origin.url).pathname, '/throws');
    assert.match(lines[0].console.join('\n'), /fixture: this page throws while rendering/);
  });

  it('is never stored by the render cache, even on a route whose policy allows sharing', async () => {
    // The origin cannot tell a page Angular rendered around a thrown error from a whole one, except
    // by the error Angular reported: such a render is served as rendered, never kept for others.
    for (const attempt of [1, 2, 3]) {
      const res = await request(origin.url, '/throws-shared');
      assert.equal(res.status, status);
      assert.equal(
        res.headers['cache-status'],
        rendersAroundErrors ? 'render-cache; fwd=uri-miss' : undefined,
        `attempt ${attempt}: ${res.headers['cache-status']}`,
      );
    }
    const health = JSON.parse((await request(origin.url, '/healthz')).text);
    assert.equal(health.renderCache.entries, 0, JSON.stringify(health.renderCache));
    // The same route with a page that renders is stored: the policy itself allows it.
    assert.equal(
      (await request(origin.url, '/products/77')).headers['cache-status'],
      'render-cache; fwd=uri-miss; stored',
    );
  });

  it('leaves renders running beside it alone: their pages are whole, the log lines name only its URL', async () => {
    await sleep(50);
    const before = reports(origin).length;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(origin.url, i % 2 ? '/throws' : `/products/${300 + i}`),
      ),
    );
    for (const [i, res] of answers.entries()) {
      assert.equal(res.status, i % 2 ? status : 200);
      if (i % 2 === 0) {
        assert.ok(
          res.text.includes(makeProduct(300 + i).name),
          `/products/${300 + i} is not whole`,
        );
      }
    }
    await sleep(50);
    const lines = reports(origin).slice(before);
    assert.equal(lines.length, 5, origin.stdout());
    assert.ok(
      lines.every(
        (line) => new URL(line.url, origin.url).pathname === '/throws' && line.console.length === 1,
      ),
      JSON.stringify(lines),
    );
    assert.equal(origin.stderr(), '', 'something wrote unstructured output');
  });
});

describe('a render slower than RENDER_TIMEOUT_MS', () => {
  let origin;
  before(async () => {
    // Every real render takes longer than 1 ms, so every render times out.
    origin = await startOrigin({
      env: { RENDER_TIMEOUT_MS: '1', MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
    });
  });
  after(async () => {
    await origin?.stop();
  });

  it('is answered with the client-side shell, not stored by caches', async () => {
    const res = await request(origin.url, '/products/9');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.body, readFileSync(join(DIST, 'browser/index.csr.html')));
  });

  it('does not pile up: abandoned renders keep their slot until they finish', async () => {
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => request(origin.url, `/products/${100 + i}`)),
    );
    assert.ok(
      responses.every((res) => res.status === 200 && res.headers['cache-control'] === 'no-store'),
    );
    const { renders } = JSON.parse((await request(origin.url, '/healthz')).text);
    assert.ok(
      renders.running <= 1,
      `more renders ran at once than allowed: ${JSON.stringify(renders)}`,
    );
    // They all drain: nothing stays queued or running once the abandoned renders finish.
    assert.deepEqual(await rendersOnceIdle(origin), { running: 0, queued: 0, backgroundQueued: 0 });
  });

  it('is logged as warnings summed up per second, not a line per request', async () => {
    const warnings = logLines(origin).filter((line) => line.msg.startsWith('render timed out'));
    assert.ok(warnings.length >= 1);
    assert.ok(warnings.length < 20, `${warnings.length} lines for 41 timeouts`);
    assert.ok(warnings.reduce((sum, line) => sum + line.count, 0) <= 41);
  });
});

describe('clients that leave', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({
      env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
    });
  });
  after(async () => {
    await origin?.stop();
  });

  it('cost nothing once gone: queued renders are dropped, the origin stays healthy', async () => {
    const leaving = Array.from({ length: 100 }, (_, i) =>
      rawRequest(origin.port, `GET /products/${500 + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`, {
        afterWrite: (socket) => setTimeout(() => socket.destroy(), 5),
      }).catch(() => {}),
    );
    await Promise.all(leaving);
    assert.deepEqual(await rendersOnceIdle(origin), { running: 0, queued: 0, backgroundQueued: 0 });
    assert.equal((await request(origin.url, '/products/1')).status, 200);
    assert.deepEqual(
      logLines(origin).filter((line) => line.level >= 40),
      [],
      'a client leaving was logged as a problem',
    );
  });
});

describe('an error outside any request', () => {
  for (const kind of ['exception', 'rejection']) {
    it(`(uncaught ${kind}) is logged and the process exits non-zero`, async () => {
      const origin = await startOrigin({
        nodeArgs: ['--import', join(import.meta.dirname, '../fixtures/crash-later.mjs')],
        env: { CRASH_KIND: kind, CRASH_AFTER_MS: '800' },
      });
      const code = await origin.exited;
      assert.equal(code, 1);
      const fatal = logLines(origin).filter((line) => line.level === 60);
      assert.equal(fatal.length, 1, origin.stdout());
      assert.match(fatal[0].err.message, /boom/);
    });

    it(`(uncaught ${kind}) lets every in-flight request finish, refuses new ones, then exits 1`, async () => {
      const origin = await startOrigin({
        nodeArgs: ['--import', join(import.meta.dirname, '../fixtures/crash-later.mjs')],
        env: {
          CRASH_KIND: kind,
          CRASH_ON_SIGNAL: '1',
          MAX_CONCURRENT_RENDERS: '1',
          RENDER_QUEUE_LIMIT: '1000',
        },
      });
      // 40 renders queued on one connection; the error comes once the first is answered, and a
      // second one while draining must not start another drain.
      const pipelined = Array.from(
        { length: 40 },
        (_, i) => `GET /products/${7000 + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      ).join('');
      let refusedWhileDraining;
      const { responses } = await rawRequest(origin.port, pipelined, {
        timeoutMs: 30_000,
        afterWrite: (socket) =>
          socket.once('data', async () => {
            process.kill(origin.pid, 'SIGUSR2');
            // Once it says it drains (it logs that as it stops listening), not after a guessed
            // delay: on a busy machine 50 ms was not always enough for the signal to be handled.
            // Past 10 s it goes on all the same: the assertions below say what went wrong.
            await waitFor(() => logLines(origin).some((line) => line.msg.startsWith('draining:')), {
              what: 'draining line',
              timeoutMs: 10_000,
              everyMs: 5,
            }).catch(() => {});
            try {
              process.kill(origin.pid, 'SIGUSR2');
            } catch {
              // already exited
            }
            refusedWhileDraining = await request(origin.url, '/products/1').then(
              () => false,
              () => true,
            );
          }),
      });
      const code = await origin.exited;
      const statuses = responses.map((response) => Number(response.slice(9, 12)));
      assert.deepEqual(statuses, Array(40).fill(200), 'in-flight requests were lost');
      assert.equal(refusedWhileDraining, true, 'a new connection was accepted while draining');
      assert.equal(code, 1);
      const lines = logLines(origin);
      const fatal = lines.filter((line) => line.level === 60);
      assert.ok(fatal.length >= 1, origin.stdout());
      assert.match(fatal[0].msg, /draining in-flight requests, then exiting 1/);
      assert.equal(
        lines.filter((line) => line.msg.startsWith('draining:')).length,
        1,
        'drained once',
      );
      assert.ok(lines.some((line) => line.msg === 'drained, exiting' && line.exitCode === 1));
    });
  }
});
