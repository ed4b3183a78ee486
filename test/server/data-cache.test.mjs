// The data cache (server/data-cache/) on its own, against a real API on loopback (node:http, with
// counters, delays and whatever headers a test gives it): what RFC 9111 lets a shared cache reuse,
// and the origin's stricter rules, checked by how many requests reach the API and what each render
// gets. Through the origin and its renders: data-pages.test.mjs.
import assert from 'node:assert/strict';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { createDataStore, DataCache } from '../../server/data-cache/data-cache.ts';
import { newDataUse, processFetch } from '../../server/data-cache/render-fetch.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * An API whose answers the tests set per path: `routes.set('/x', (req, n) => ({ status, headers,
 * body, delayMs }))`, `n` counting the requests to that path. Every request is recorded.
 */
async function startApi() {
  const routes = new Map();
  const seen = [];
  const api = await serveOnLoopback(async (req, res) => {
    const path = req.url;
    seen.push({ path, headers: req.headers });
    const n = seen.filter((s) => s.path === path).length;
    const route = routes.get(path.split('?')[0]);
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    const answer = route(req, n);
    if (answer.delayMs) await sleep(answer.delayMs);
    if (answer.hang) return;
    res.writeHead(answer.status ?? 200, answer.headers ?? {});
    res.end(answer.body ?? '');
  });
  return { ...api, routes, seen, count: (path) => seen.filter((s) => s.path === path).length };
}

function cacheWith(options = {}) {
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  return new DataCache({
    maxBytes,
    maxEntryBytes: options.maxEntryBytes ?? 64 * 1024,
    hosts: options.hosts,
    store: maxBytes === 0 ? undefined : createDataStore(maxBytes),
    shared: undefined,
    fetch: processFetch,
    patienceMs: 2000,
    log: quiet,
  });
}

/** One render's fetch: the response's text and status, and what the page was told. */
async function get(cache, url, init = {}) {
  const use = newDataUse(false);
  const response = await cache.fetch(new Request(url, init), use);
  return { status: response.status, text: await response.text(), headers: response.headers, use };
}

describe('the data cache: what it reuses', () => {
  let api;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());
  beforeEach(() => {
    api.routes.clear();
    api.seen.length = 0;
  });

  it('reuses a response while fresh by its max-age, one request to the API', async () => {
    api.routes.set('/fresh', (_, n) => ({
      headers: { 'cache-control': 'max-age=60', 'content-type': 'application/json' },
      body: `{"n":${n}}`,
    }));
    const cache = cacheWith();
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get(cache, `${api.url}/fresh`));
    assert.equal(api.count('/fresh'), 1);
    assert.deepEqual(
      answers.map((a) => a.text),
      Array(5).fill('{"n":1}'),
    );
    assert.deepEqual(
      answers.map((a) => a.use.fetches[0].outcome),
      ['miss', 'hit', 'hit', 'hit', 'hit'],
    );
    assert.match(answers[4].headers.get('age'), /^\d+$/);
  });

  it('asks the API once for a URL that many renders ask for at once', async () => {
    api.routes.set('/catalog', () => ({
      headers: { 'cache-control': 'public, max-age=60' },
      body: 'catalog',
      delayMs: 80,
    }));
    const cache = cacheWith();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => get(cache, `${api.url}/catalog`)),
    );
    assert.equal(api.count('/catalog'), 1);
    assert.ok(answers.every((a) => a.text === 'catalog'));
    assert.equal(answers.filter((a) => a.use.fetches[0].outcome === 'coalesced').length, 19);
  });

  it('revalidates a stale response with its ETag, and a 304 makes it fresh again (RFC 9111 §4.3.4)', async () => {
    api.routes.set('/item', (req, n) =>
      req.headers['if-none-match'] === '"v1"'
        ? { status: 304, headers: { etag: '"v1"', 'cache-control': 'max-age=1' } }
        : { headers: { etag: '"v1"', 'cache-control': 'max-age=1' }, body: `item ${n}` },
    );
    const cache = cacheWith();
    assert.equal((await get(cache, `${api.url}/item`)).text, 'item 1');
    await sleep(1100);
    const revalidated = await get(cache, `${api.url}/item`);
    assert.equal(revalidated.text, 'item 1', 'the stored body');
    assert.equal(revalidated.use.fetches[0].outcome, 'revalidated');
    const conditional = api.seen.at(-1).headers;
    assert.equal(conditional['if-none-match'], '"v1"');
    assert.equal(conditional['cache-control'], 'max-age=0', 'not the no-cache fetch adds');
    // Fresh again for the 304's max-age: no request to the API.
    assert.equal((await get(cache, `${api.url}/item`)).use.fetches[0].outcome, 'hit');
    assert.equal(api.count('/item'), 2);
  });

  it('answers at once within stale-while-revalidate, one refresh in the background', async () => {
    let version = 1;
    api.routes.set('/swr', () => ({
      headers: { 'cache-control': 'max-age=1, stale-while-revalidate=30' },
      body: `v${version}`,
      delayMs: version === 1 ? 0 : 300,
    }));
    const cache = cacheWith();
    await get(cache, `${api.url}/swr`);
    await sleep(1100);
    version = 2;
    const started = performance.now();
    const stale = await Promise.all([1, 2, 3].map(() => get(cache, `${api.url}/swr`)));
    assert.ok(performance.now() - started < 250, 'nobody waited for the slow refresh');
    assert.deepEqual(
      stale.map((a) => [a.text, a.use.fetches[0].outcome]),
      Array(3).fill(['v1', 'stale']),
    );
    await sleep(450);
    assert.equal((await get(cache, `${api.url}/swr`)).text, 'v2');
    assert.equal(api.count('/swr'), 2, 'one refresh for three stale answers');
  });

  it('answers with the last good response while stale-if-error allows, and with the error after', async () => {
    let failing = false;
    api.routes.set('/flaky', () =>
      failing
        ? { status: 503, headers: { 'retry-after': '1' }, body: 'down' }
        : { headers: { 'cache-control': 'max-age=1, stale-if-error=2' }, body: 'good' },
    );
    const cache = cacheWith();
    await get(cache, `${api.url}/flaky`);
    failing = true;
    await sleep(1100);
    const saved = await get(cache, `${api.url}/flaky`);
    assert.equal(saved.status, 200);
    assert.equal(saved.text, 'good');
    await sleep(2100);
    const failed = await get(cache, `${api.url}/flaky`);
    assert.equal(failed.status, 503);
    assert.equal(failed.text, 'down');
  });

  for (const [why, answer, init] of [
    ['private', { headers: { 'cache-control': 'private, max-age=60' } }],
    ['no-store', { headers: { 'cache-control': 'no-store' } }],
    [
      'Set-Cookie on a public answer',
      { headers: { 'cache-control': 'public, max-age=60', 'set-cookie': 'a=1' } },
    ],
    ['a 500', { status: 500, headers: { 'cache-control': 'max-age=60' } }],
    ['Vary: *', { headers: { 'cache-control': 'max-age=60', vary: '*' } }],
    [
      'credentials without public',
      { headers: { 'cache-control': 'max-age=60' } },
      { headers: { authorization: 'Bearer alice' } },
    ],
    [
      'a cookie without public',
      { headers: { 'cache-control': 'max-age=60' } },
      { headers: { cookie: 'sid=alice' } },
    ],
  ]) {
    it(`never reuses an answer that is ${why}`, async () => {
      api.routes.set('/never', (_, n) => ({ ...answer, body: `answer ${n}` }));
      const cache = cacheWith();
      const first = await get(cache, `${api.url}/never`, init);
      const second = await get(cache, `${api.url}/never`, init);
      assert.equal(first.text, 'answer 1');
      assert.equal(second.text, 'answer 2');
      assert.equal(api.count('/never'), 2);
    });
  }

  it('reuses an answer to credentials that its API marks public or s-maxage', async () => {
    api.routes.set('/public', (_, n) => ({
      headers: { 'cache-control': 'public, max-age=60' },
      body: `answer ${n}`,
    }));
    const cache = cacheWith();
    await get(cache, `${api.url}/public`, { headers: { authorization: 'Bearer a' } });
    const other = await get(cache, `${api.url}/public`);
    assert.equal(other.text, 'answer 1');
    assert.equal(api.count('/public'), 1);
  });

  it('never coalesces a request with credentials with another', async () => {
    api.routes.set('/me', (req) => ({
      headers: { 'cache-control': 'private' },
      body: `me ${req.headers.authorization}`,
      delayMs: 50,
    }));
    const cache = cacheWith();
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((who) =>
        get(cache, `${api.url}/me`, { headers: { authorization: `Bearer ${who}` } }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.text),
      ['me Bearer a', 'me Bearer b', 'me Bearer c'],
    );
  });

  it('keeps a response apart per value of the headers it varies on', async () => {
    api.routes.set('/vary', (req) => ({
      headers: { 'cache-control': 'max-age=60', vary: 'Accept-Language' },
      body: `in ${req.headers['accept-language']}`,
    }));
    const cache = cacheWith();
    for (let round = 0; round < 2; round++) {
      for (const language of ['fr', 'de']) {
        const answer = await get(cache, `${api.url}/vary`, {
          headers: { 'accept-language': language },
        });
        assert.equal(answer.text, `in ${language}`);
      }
    }
    assert.ok(api.count('/vary') <= 3, `${api.count('/vary')} requests for two variants`);
  });

  it('passes on a body larger than DATA_CACHE_MAX_ENTRY_BYTES whole, and never keeps it', async () => {
    const big = 'x'.repeat(200 * 1024);
    api.routes.set('/big', () => ({ headers: { 'cache-control': 'max-age=60' }, body: big }));
    const cache = cacheWith({ maxEntryBytes: 64 * 1024 });
    const answers = await Promise.all([1, 2, 3].map(() => get(cache, `${api.url}/big`)));
    assert.ok(
      answers.every((a) => a.text === big),
      'every waiter got the whole body',
    );
    await get(cache, `${api.url}/big`);
    assert.equal(
      api.count('/big'),
      1 + 2 + 1,
      'the first passed on, the waiters asked again, never kept',
    );
  });

  it('names the API tags as groups (api:…) and the app’s own for a request, and drops them when revalidated', async () => {
    api.routes.set('/tagged', (_, n) => ({
      headers: {
        'cache-control': 'max-age=60',
        'cache-tag': 'product-7, catalog',
        'surrogate-key': 'brand-3',
      },
      body: `v${n}`,
    }));
    const store = createDataStore(1024 * 1024);
    const cache = new DataCache({
      maxBytes: 1024 * 1024,
      maxEntryBytes: 65536,
      hosts: undefined,
      store,
      shared: undefined,
      fetch: processFetch,
      patienceMs: 2000,
      log: quiet,
    });
    const first = await get(cache, `${api.url}/tagged`, {
      headers: { 'cache-groups': '"product-7"' },
    });
    assert.deepEqual([...first.use.groups].sort(), [
      'api:brand-3',
      'api:catalog',
      'api:product-7',
      'product-7',
    ]);
    assert.equal(api.seen.at(-1).headers['cache-groups'], undefined, 'the app’s groups stay here');
    assert.equal(
      store.revalidate({ paths: [], groups: ['api:catalog'], mode: 'hard', at: Date.now() }),
      1,
    );
    assert.equal((await get(cache, `${api.url}/tagged`)).text, 'v2');
  });

  it('tells the page how fresh and how private its data was', async () => {
    api.routes.set('/short', () => ({ headers: { 'cache-control': 'max-age=5' }, body: 's' }));
    api.routes.set('/silent', () => ({ body: 'no word of caches' }));
    api.routes.set('/mine', () => ({ headers: { 'cache-control': 'private' }, body: 'm' }));
    const cache = cacheWith();
    const use = newDataUse(false);
    for (const path of ['/short', '/silent']) {
      await (await cache.fetch(new Request(`${api.url}${path}`), use)).text();
    }
    assert.ok(use.freshMs <= 5000 && use.freshMs >= 4000, `${use.freshMs}`);
    assert.equal(use.private, false);
    await (await cache.fetch(new Request(`${api.url}/mine`), use)).text();
    assert.equal(use.private, true);
  });

  it('with DATA_CACHE_BYTES=0 keeps nothing, and still tells the page what its data allows', async () => {
    api.routes.set('/off', (_, n) => ({
      headers: { 'cache-control': 'max-age=60' },
      body: `${n}`,
    }));
    const cache = cacheWith({ maxBytes: 0 });
    const answers = [await get(cache, `${api.url}/off`), await get(cache, `${api.url}/off`)];
    assert.deepEqual(
      answers.map((a) => [a.text, a.use.fetches[0].outcome]),
      [
        ['1', 'bypass'],
        ['2', 'bypass'],
      ],
    );
    // max-age=60 less the answer's age, which the milliseconds since it arrived add to.
    const { freshMs } = answers[0].use;
    assert.ok(freshMs <= 60_000 && freshMs > 59_000, `${freshMs}`);
  });

  it('goes past the cache for hosts DATA_CACHE_HOSTS does not name, and for no-cache requests', async () => {
    api.routes.set('/any', (_, n) => ({
      headers: { 'cache-control': 'max-age=60' },
      body: `${n}`,
    }));
    const elsewhere = cacheWith({ hosts: new Set(['api.example.com']) });
    await get(elsewhere, `${api.url}/any`);
    await get(elsewhere, `${api.url}/any`);
    assert.equal(api.count('/any'), 2);
    const cache = cacheWith();
    await get(cache, `${api.url}/any`);
    await get(cache, `${api.url}/any`, { cache: 'no-store' });
    await get(cache, `${api.url}/any`, { headers: { 'cache-control': 'no-cache' } });
    assert.equal(api.count('/any'), 5);
  });
});

describe('the data cache: a hostile or broken API', () => {
  let api;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  it('keeps nothing of a wrong Content-Length, a redirect loop, an invalid Cache-Control', async () => {
    api.routes.set('/short-body', () => ({
      headers: { 'cache-control': 'max-age=60', 'content-length': '100', connection: 'close' },
      body: 'only this',
    }));
    api.routes.set('/loop', () => ({ status: 302, headers: { location: '/loop' } }));
    api.routes.set('/garbled', (_, n) => ({
      headers: { 'cache-control': 'max-age=abc, s-maxage="x' },
      body: `${n}`,
    }));
    const cache = cacheWith();
    await assert.rejects(get(cache, `${api.url}/short-body`));
    await assert.rejects(get(cache, `${api.url}/loop`));
    assert.equal((await get(cache, `${api.url}/garbled`)).text, '1');
    assert.equal((await get(cache, `${api.url}/garbled`)).text, '2');
  });

  it('a 304 that matches nothing stored is not an update: the whole answer is asked for once, and a 304 again is a failure', async () => {
    // The API's 304 lacks the validator the stored answer has (RFC 9111 §4.3.4 forbids the update).
    api.routes.set('/no-validator', (req, n) =>
      req.headers['if-none-match']
        ? { status: 304, headers: { 'cache-control': 'max-age=60' } }
        : { headers: { etag: `"v${n}"`, 'cache-control': 'max-age=1' }, body: `v${n}` },
    );
    // An API that answers 304 to anything, asked or not.
    api.routes.set('/always-304', () => ({ status: 304, headers: { etag: '"x"' } }));
    const cache = cacheWith();
    assert.equal((await get(cache, `${api.url}/no-validator`)).text, 'v1');
    await sleep(1100);
    const refetched = await get(cache, `${api.url}/no-validator`);
    assert.equal(refetched.text, 'v3', 'the conditional request, then the whole answer');
    assert.equal(refetched.status, 200);
    const broken = await get(cache, `${api.url}/always-304`);
    assert.equal(broken.use.fetches[0].outcome, 'error');
    assert.equal(broken.use.failed, true, 'the page made of it is not kept');
    const again = await get(cache, `${api.url}/always-304`);
    assert.equal(again.use.fetches[0].outcome, 'error', 'nothing was stored of it');
  });

  it('an API whose ETag changes on every request: each revalidation brings the whole answer, once', async () => {
    api.routes.set('/restless', (_, n) => ({
      headers: { etag: `"${n}"`, 'cache-control': 'max-age=0' },
      body: `r${n}`,
    }));
    const cache = cacheWith();
    const before = api.count('/restless');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await get(cache, `${api.url}/restless`)).text);
    assert.equal(api.count('/restless') - before, 3, 'one request per render, no loop');
    assert.equal(new Set(answers).size, 3);
  });

  it('stops waiting for a hanging API when the render gives up, and keeps nothing', async () => {
    api.routes.set('/hang', () => ({ hang: true }));
    const cache = cacheWith();
    const use = newDataUse(false);
    await assert.rejects(
      cache.fetch(new Request(`${api.url}/hang`, { signal: AbortSignal.timeout(200) }), use),
    );
    assert.equal(use.fetches[0].outcome, 'error');
  });

  it('property: no answer to a request with credentials reaches another request unless its API says public or s-maxage', async () => {
    const directives = fc.subarray(
      ['public', 'private', 'no-store', 'no-cache', 'max-age=60', 's-maxage=60', 'must-revalidate'],
      { maxLength: 4 },
    );
    const credential = fc.constantFrom(
      undefined,
      { authorization: 'Bearer x' },
      { cookie: 'sid=y' },
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        directives,
        fc.option(fc.constantFrom('Cookie', 'Authorization', 'Accept')),
        credential,
        credential,
        async (cc, vary, firstCredential, secondCredential) => {
          const path = `/p${round++}`;
          api.routes.set(path, (_, n) => ({
            headers: { 'cache-control': cc.join(', '), ...(vary ? { vary } : {}) },
            body: `canary-${path}-${n}`,
          }));
          const cache = cacheWith();
          const first = await get(cache, `${api.url}${path}`, { headers: firstCredential ?? {} });
          const second = await get(cache, `${api.url}${path}`, { headers: secondCredential ?? {} });
          const reused = second.text === first.text;
          if (reused && firstCredential !== undefined) {
            assert.ok(
              cc.includes('public') || cc.includes('s-maxage=60'),
              `${cc}: a credentialed answer reached another request`,
            );
          }
          if (reused) {
            assert.ok(!cc.includes('private') && !cc.includes('no-store'), `${cc} reused`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
