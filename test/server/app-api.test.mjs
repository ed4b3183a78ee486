// The app's own API (its server bundle's `api` export, here test/app/src/api.ts): the origin answers
// `/api/…` with it before the Host guard (renders call it by an internal address), as the API made
// the answer, never rendering for it; an app without one is served as before. Renders reach it over
// plain HTTP on loopback, on a listener of each process's own: with TLS_CERT and TLS_KEY no
// certificate is checked for 127.0.0.1, and while the public port drains renders still reach it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ownApiFetch, routeOwnApi } from '../../server/app-api/api-route.ts';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { health, logLines, request, startOrigin, workersListening } from '../helpers/origin.mjs';

/** The origin's own line saying where it listens, and where renders reach the app's API. */
const listening = (origin) =>
  logLines(origin).find((line) => line.msg.startsWith('Origin listening'));

describe('the app API on /api/…', () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin?.stop());

  it('answers before the Host guard, whatever the Host, under a fixed origin', async () => {
    for (const host of ['evil.example', '10.0.0.7:4000', 'localhost']) {
      const res = await request(origin.url, '/api/echo?q=1', {
        headers: { host, 'x-test': 'passed on' },
      });
      assert.equal(res.status, 200, host);
      const echo = JSON.parse(res.text);
      assert.equal(
        echo.url,
        'http://localhost/api/echo?q=1',
        'the API never sees a Host as its origin',
      );
      assert.equal(echo.test, 'passed on');
      assert.equal(res.headers['cache-control'], 'no-store', "the API's own headers");
      assert.equal(res.headers.etag, '"echo"');
    }
    // A page with such a Host is the guard's to refuse, as ever.
    assert.equal(
      (await request(origin.url, '/products/1', { headers: { host: 'evil.example' } })).status,
      400,
    );
  });

  it('never renders for it, whatever the API answers', async () => {
    const before = (await health(origin)).renders.started;
    const asked = await Promise.all(
      ['/api/echo', '/api/cookies', '/api/not-modified', '/api/throws', '/api/shadowed.json'].map(
        (path) => request(origin.url, path),
      ),
    );
    assert.deepEqual(
      asked.map((res) => res.status),
      [200, 200, 304, 500, 200],
    );
    assert.equal((await health(origin)).renders.started, before);
  });

  it('writes the answer as the API made it: cookies apart, 304 and HEAD without a body, a body passed in', async () => {
    const cookies = await request(origin.url, '/api/cookies');
    assert.deepEqual(cookies.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    const notModified = await request(origin.url, '/api/not-modified');
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    assert.equal(notModified.headers.etag, '"v1"');
    // An API that answers HEAD as it answers GET, with no Content-Length of its own.
    const get = await request(origin.url, '/api/shadowed.json');
    const head = await request(origin.url, '/api/shadowed.json', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    const posted = await request(origin.url, '/api/echo', {
      method: 'POST',
      body: 'x'.repeat(70_000),
    });
    assert.equal(JSON.parse(posted.text).bodyBytes, 70_000);
  });

  it('an API that throws gets a 500 as JSON, logged once, and the next request is answered', async () => {
    const res = await request(origin.url, '/api/throws');
    assert.equal(res.status, 500);
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.deepEqual(JSON.parse(res.text), { error: 'the API failed to answer' });
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(logLines(origin).some((line) => line.msg === 'the app api failed'));
    assert.equal((await request(origin.url, '/api/echo')).status, 200);
  });

  it('a path the API leaves goes on down the chain: the Host guard, then the pages', async () => {
    assert.equal(
      (await request(origin.url, '/api/not-mine', { headers: { host: 'evil.example' } })).status,
      400,
    );
    const page = await request(origin.url, '/api/not-mine');
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type'], /^text\/html/);
  });

  it('answers its paths itself, never the fast path: not even a file of the build there', async () => {
    // Twice: the second request's Host is known, which is when the fast path would answer.
    for (let i = 0; i < 2; i++) {
      const res = await request(origin.url, '/api/shadowed.json');
      assert.deepEqual(JSON.parse(res.text), { from: 'the api' });
    }
  });

  it("says where renders reach it when API_URL does not: the origin's own address", () => {
    assert.equal(listening(origin).api, `${origin.url}/api`);
  });
});

describe('an app without an API', () => {
  let origin;
  let configured;
  before(async () => {
    [origin, configured] = await Promise.all([
      startOrigin({ env: { TEST_APP_API: 'off' } }),
      startOrigin({ env: { API_URL: 'http://api.internal:8080/api' } }),
    ]);
  });
  after(() => Promise.all([origin?.stop(), configured?.stop()]));

  it('is served as before: /api/… is a path of its pages, behind the Host guard, its files from memory', async () => {
    assert.equal(
      (await request(origin.url, '/api/echo', { headers: { host: 'evil.example' } })).status,
      400,
    );
    const page = await request(origin.url, '/api/echo');
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type'], /^text\/html/);
    for (let i = 0; i < 2; i++) {
      const file = await request(origin.url, '/api/shadowed.json');
      assert.deepEqual(JSON.parse(file.text), { from: 'the file' });
    }
    assert.ok((await health(origin)).answeredBeforeKoa > 0, 'the file came from the fast path');
  });

  it('sets no API_URL, and one that is set is left as it is', () => {
    assert.equal(listening(origin).api, undefined);
    assert.equal(listening(configured).api, undefined);
  });
});

/**
 * The origin's Node trusts no certificate of the tests', whatever this process's environment says:
 * as in production, where the certificate names the public host and never 127.0.0.1.
 */
const UNTRUSTED = { NODE_EXTRA_CA_CERTS: '' };

/** The `data/:id` page made of the app's own API (TEST_DATA_API=own), and what it shows of it. */
async function ownDataPage(origin, id) {
  const res = await request(origin.url, `/data/${id}`);
  const shown = (name) => new RegExp(`<p class="${name}">([^<]*)</p>`).exec(res.text)?.[1];
  return { ...res, catalog: shown('catalog'), item: shown('item') };
}

/** Which process logged the access line of each URL (ACCESS_LOG=true). */
function pidsByUrl(origin) {
  const pids = new Map();
  for (const line of logLines(origin)) {
    if (line.msg === 'request') pids.set(line.url, line.pid);
  }
  return pids;
}

describe("renders reach the app's own API without going through TLS", () => {
  for (const workers of [1, 2]) {
    it(`with TLS_CERT and TLS_KEY, ${workers === 1 ? 'one process' : 'WORKERS=2'}: a page of its data is 200 with it over HTTP/2, each worker asking its own listener`, async () => {
      const origin = await startOrigin({
        protocol: 'h2',
        env: { ...UNTRUSTED, TEST_DATA_API: 'own', WORKERS: String(workers), ACCESS_LOG: 'true' },
      });
      const ids = Array.from({ length: workers * 4 }, (_, i) => 200 + i);
      try {
        await workersListening(origin, workers);
        for (const id of ids) {
          const page = await ownDataPage(origin, id);
          assert.equal(page.httpVersion, '2.0');
          assert.equal(page.status, 200, `/data/${id}`);
          assert.equal(page.item, `own item ${id}`, `/data/${id}: its data`);
          assert.equal(page.catalog, 'own catalog', `/data/${id}: its catalog`);
        }
      } finally {
        // Stopped first: every access line is out once it exited.
        assert.equal(await origin.stop(), 0);
      }
      // API_URL says the origin's own address, as ever: what the data cache keys by and the
      // transfer cache maps; the requests go to a plain-HTTP listener on loopback instead.
      const said = logLines(origin).filter((line) => line.msg.startsWith('Origin listening'));
      assert.equal(said.length, workers);
      for (const line of said) {
        assert.equal(line.api, `${origin.url}/api`);
        assert.match(line.apiVia, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.notEqual(new URL(line.apiVia).port, String(origin.port));
      }
      assert.equal(new Set(said.map((line) => line.apiVia)).size, workers, 'a listener each');
      const pids = pidsByUrl(origin);
      for (const id of ids) {
        assert.equal(
          pids.get(`/api/items/${id}`),
          pids.get(`/data/${id}`),
          `/data/${id}: its render's API request was answered by another process`,
        );
      }
      assert.equal(new Set(ids.map((id) => pids.get(`/data/${id}`))).size, workers);
      assert.deepEqual(
        logLines(origin).filter((line) => line.level >= 40),
        [],
        'no warning, no error',
      );
    });
  }

  it('renders still in flight while the origin drains reach it, though the public port no longer accepts', async () => {
    // One render at a time: most of them start after SIGTERM, once the public port is closed.
    const origin = await startOrigin({
      env: { TEST_DATA_API: 'own', MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '100' },
    });
    const asked = Array.from({ length: 12 }, (_, i) => ownDataPage(origin, 300 + i));
    // Signalled once the origin took all twelve connections: the kernel hands them over in order,
    // so one answered after them means they were. (A connection still in the accept queue when the
    // port closes is reset: the drain window, DRAIN_WINDOW_MS, is what spares those.)
    assert.equal((await request(origin.url, '/healthz')).status, 200);
    process.kill(origin.pid, 'SIGTERM');
    const pages = await Promise.all(asked);
    assert.deepEqual(
      pages.map(({ status, item }) => `${status} ${item}`),
      pages.map((_, i) => `200 own item ${300 + i}`),
    );
    assert.equal(await origin.exited, 0);
    assert.ok(logLines(origin).some((line) => line.msg === 'drained, exiting'));
  });
});

describe('the way to the own API (server/app-api/api-route.ts)', () => {
  let own;
  let other;
  before(async () => {
    /** A server that says which it is, and what it was asked. */
    const saying = (name) => async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      res.end(`${name} ${req.method} ${req.url} ${req.headers.traceparent ?? '-'} ${body}`);
    };
    [own, other] = await Promise.all([
      serveOnLoopback(saying('own')),
      serveOnLoopback(saying('other')),
    ]);
  });
  after(() => Promise.all([own?.close(), other?.close()]));

  it("sends the API's paths at API_URL's origin to the private listener, as they were asked; anything else where it was going", async () => {
    const fetch = ownApiFetch(globalThis.fetch);
    const text = async (input, init) => (await fetch(input, init)).text();
    assert.equal(
      await text(`${other.url}/api/items/1?x=1`),
      'other GET /api/items/1?x=1 - ',
      'no route yet',
    );
    // API_URL at `other`'s address: the public port, which renders no longer need to reach.
    routeOwnApi(`${other.url}/api`, own.url);
    assert.equal(await text(`${other.url}/api/items/1?x=1`), 'own GET /api/items/1?x=1 - ');
    assert.equal(await text(new URL(`${other.url}/api`)), 'own GET /api - ');
    const traced = new Request(`${other.url}/api/echo`, {
      method: 'POST',
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      body: 'a body',
    });
    assert.equal(
      await text(traced),
      'own POST /api/echo 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 a body',
    );
    for (const path of ['/apiary', '/products/1', '/']) {
      assert.equal(await text(`${other.url}${path}`), `other GET ${path} - `, path);
    }
    // The private listener's own address is asked as it is; an origin that only starts like
    // API_URL's is not its, and is not sent there (here it fails: no such port).
    assert.equal(await text(`${own.url}/api/x`), 'own GET /api/x - ');
    await assert.rejects(text(`${other.url}0/api/x`), TypeError);
  });
});
