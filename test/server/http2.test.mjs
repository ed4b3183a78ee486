// TLS_CERT and TLS_KEY: HTTPS with HTTP/2, and HTTP/1.1 for clients that ask for it (ALPN). What
// every part of the origin does must hold on both: the fast path and the render cache, the Host
// rules (over HTTP/2 the authority is `:authority`), CSP, health, a cluster's workers sharing the
// TLS port, and draining on SIGTERM (HTTP/2 sessions get GOAWAY, in-flight streams finish). The 103
// Early Hints a page gets over HTTP/2 is in test/server/early-hints.test.mjs, Chromium acting on it
// in test/browser/early-hints.test.mjs; compression over both in test/server/compression.test.mjs.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:http2';
import { Agent, get } from 'node:https';
import { after, before, describe, it } from 'node:test';
import {
  at,
  health,
  logLines,
  request,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';

/** Both protocols of an HTTPS origin, as `request` options. */
const OVER = [
  ['HTTP/2', {}],
  ['HTTP/1.1 over TLS', { http1: true }],
];

/** One HTTP/2 request with exactly these headers (pseudo-headers included). */
function h2(url, headers) {
  return new Promise((resolve, reject) => {
    const session = connect(url, { rejectUnauthorized: false });
    session.on('error', reject);
    const stream = session.request(headers);
    let response;
    stream.on('response', (sent) => (response = sent));
    stream.resume();
    stream.on('end', () => {
      session.close();
      resolve(response);
    });
    stream.on('error', reject);
  });
}

describe('HTTPS with HTTP/2', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ protocol: 'h2' });
  });
  after(async () => {
    await origin?.stop();
  });

  it('speaks HTTP/2 to a client that offers it, HTTP/1.1 to one that does not: the same answers', async () => {
    assert.match(origin.url, /^https:/);
    const [two, one] = await Promise.all([
      request(origin.url, at('/')),
      request(origin.url, at('/'), { http1: true }),
    ]);
    assert.equal(two.httpVersion, '2.0');
    assert.equal(one.httpVersion, '1.1');
    for (const name of ['etag', 'content-type', 'cache-control', 'vary', 'content-length']) {
      assert.equal(two.headers[name], one.headers[name], name);
    }
    assert.ok(two.body.equals(one.body));
    assert.equal(two.headers.connection, undefined, 'no connection header over HTTP/2');
  });

  for (const [protocol, options] of OVER) {
    it(`answers files and cached pages before Koa, and serves the render cache, over ${protocol}`, async () => {
      const id = protocol === 'HTTP/2' ? 21 : 22;
      const before = (await health(origin)).answeredBeforeKoa;
      for (let i = 0; i < 2; i++) {
        assert.equal((await request(origin.url, at('/favicon.ico'), options)).status, 200);
      }
      const first = await request(origin.url, at(`/products/${id}`), options);
      assert.match(first.headers['cache-status'], /fwd=uri-miss; stored/);
      const second = await request(origin.url, at(`/products/${id}`), options);
      assert.match(second.headers['cache-status'], /^render-cache; hit/);
      assert.equal(second.headers.etag, first.headers.etag);
      assert.ok((await health(origin)).answeredBeforeKoa >= before + 2, 'the fast path answered');
    });

    it(`answers /healthz and /readyz over ${protocol}, whatever the authority`, async () => {
      for (const path of ['/healthz', '/readyz']) {
        const res = await request(origin.url, path, {
          ...options,
          headers: { host: '10.0.0.9' },
        });
        assert.equal(res.status, 200, path);
        assert.equal(JSON.parse(res.text).status, 'ok');
      }
    });
  }

  it('takes the authority from :authority, and refuses one a Host header contradicts', async () => {
    const page = (authority, host) =>
      h2(origin.url, {
        ':path': at('/products/3'),
        ':authority': authority,
        ...(host === undefined ? {} : { host }),
      });
    assert.equal((await page('localhost'))[':status'], 200);
    assert.equal(
      (await page(`localhost:${origin.port}`, `localhost:${origin.port}`))[':status'],
      200,
    );
    assert.equal((await page('evil.example'))[':status'], 400, 'not an allowed host');
    assert.equal((await page('localhost', 'evil.example'))[':status'], 400, 'Host contradicts it');
    assert.equal((await page('localhost:99999'))[':status'], 400, 'malformed');
  });
});

describe('CSP=strict over HTTP/2', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ protocol: 'h2', env: { CSP: 'strict' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('gives every HTML answer a fresh nonce, in the policy and the page alike', async () => {
    for (const path of ['/', '/products/4', '/dashboard']) {
      const nonces = [];
      for (let i = 0; i < 2; i++) {
        const res = await request(origin.url, at(path));
        assert.equal(res.status, 200, path);
        const nonce = /'nonce-([\w-]+)'/.exec(res.headers['content-security-policy'])[1];
        assert.ok(
          res.text.includes(`nonce="${nonce}"`),
          `${path}: the page has the policy's nonce`,
        );
        nonces.push(nonce);
      }
      assert.notEqual(nonces[0], nonces[1], `${path}: a nonce per answer`);
    }
  });
});

describe('draining over HTTP/2', () => {
  it('finishes every in-flight stream, sends GOAWAY, refuses new connections, exits 0', async () => {
    const origin = await startOrigin({
      protocol: 'h2',
      env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
    });
    const session = connect(origin.url, { rejectUnauthorized: false });
    const goaway = once(session, 'goaway');
    // Twenty renders on one session, one at a time: most are in flight when the signal comes.
    const answers = Array.from(
      { length: 20 },
      (_, i) =>
        new Promise((resolve, reject) => {
          const stream = session.request({ ':path': at(`/products/${3000 + i}`) });
          let status;
          stream.on('response', (headers) => {
            status = headers[':status'];
            if (i === 0) process.kill(origin.pid, 'SIGTERM');
          });
          stream.resume();
          stream.on('end', () => resolve(status));
          stream.on('error', reject);
        }),
    );
    assert.deepEqual(
      await Promise.all(answers),
      Array(20).fill(200),
      'in-flight streams were lost',
    );
    await goaway;
    session.close();
    assert.equal(await origin.exited, 0);
    await assert.rejects(request(origin.url, '/healthz', { timeoutMs: 2000 }), 'still accepting');
    assert.ok(logLines(origin).some((line) => line.msg === 'drained, exiting'));
    assert.doesNotMatch(origin.stderr(), /connection header/i, 'no Connection header over HTTP/2');
  });

  it('closes an idle HTTP/1.1 keep-alive connection on the TLS port at once', async () => {
    const origin = await startOrigin({ protocol: 'h2' });
    const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
    const status = await new Promise((resolve, reject) => {
      get(`${origin.url}${at('/favicon.ico')}`, { agent, ALPNProtocols: ['http/1.1'] }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      }).on('error', reject);
    });
    assert.equal(status, 200);
    assert.equal(
      Object.values(agent.freeSockets).flat().length,
      1,
      'an idle keep-alive connection',
    );
    const started = Date.now();
    process.kill(origin.pid, 'SIGTERM');
    assert.equal(await origin.exited, 0);
    // keepAliveTimeout is 5 s: the drain closed the connection instead of waiting it out.
    assert.ok(Date.now() - started < 4000, `exited after ${Date.now() - started} ms`);
    agent.destroy();
  });
});

describe('a cluster on the TLS port', () => {
  it('serves HTTP/2 from every worker and drains them all', async () => {
    const origin = await startOrigin({ protocol: 'h2', env: { WORKERS: '2' } });
    try {
      await workersListening(origin, 2);
      const pids = new Set();
      for (let i = 0; i < 20 && pids.size < 2; i++) {
        const res = await request(origin.url, '/healthz');
        assert.equal(res.httpVersion, '2.0');
        pids.add(JSON.parse(res.text).pid);
      }
      assert.equal(pids.size, 2, 'both workers answered');
      assert.equal((await request(origin.url, at('/products/9'))).status, 200);
    } finally {
      assert.equal(await origin.stop(), 0);
    }
  });
});
