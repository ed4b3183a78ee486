// Cache groups and on-demand revalidation without Redis (docs/revalidation.md), over real HTTP on
// the tests' app: /products/:id declares `s-maxage=60, stale-while-revalidate=600, …` and
// the groups "product-<id>", "catalog" (test/app/src/app/pages/product.ts, addCacheGroups).
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { freePort, listenOnFreePort } from '../../scripts/lib/ports.mjs';
import { answer } from '../../server/http/answer.ts';
import { sharedCachePolicy } from '../../server/render-cache/policy.ts';
import { createPageStore } from '../../server/render-cache/page-cache.ts';
import {
  ROOT,
  health,
  logLines,
  rendersIdle as idle,
  request,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_TYPE = { 'content-type': 'application/json' };
const PATH = '/_origin/revalidate';

/** POST /_origin/revalidate with the token and a JSON body (an object is serialized). */
function revalidate(origin, body, headers = {}) {
  return request(origin.url, PATH, {
    method: 'POST',
    headers: { ...AUTH, ...JSON_TYPE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A loopback port nothing listens on (it did a moment ago). */
const closedPort = freePort;

/** A page rendered and stored, then answered from the cache. */
async function cached(origin, path) {
  await request(origin.url, path);
  const hit = await request(origin.url, path);
  assert.match(hit.headers['cache-status'], /^render-cache; hit; ttl=\d+$/, path);
  return hit;
}

describe("the page store's revalidate (on its own clock)", () => {
  const ORIGIN = 'http://localhost:4000';
  /** A page under `cacheControl` declaring `groups`. */
  const page = (groups = [], cacheControl = 'public, s-maxage=60') => ({
    answer: answer(200, [], Buffer.from('page')),
    groups,
    storedAt: 0,
    policy: sharedCachePolicy(cacheControl),
    refreshFailed: false,
  });
  const clocked = () => {
    const clock = { now: 1_000_000 };
    return { clock, cache: createPageStore({ maxBytes: 1024 * 1024, now: () => clock.now }) };
  };

  it('soft: stale for as long as it is kept, even without stale-while-revalidate; a new page is fresh', () => {
    const { clock, cache } = clocked();
    cache.store(`${ORIGIN}/a`, page(['g'], 'public, s-maxage=60, must-revalidate'));
    clock.now += 1000;
    assert.equal(cache.revalidate({ paths: [], groups: ['g'], mode: 'soft', at: clock.now }), 1);
    assert.equal(
      cache.entries.peekFresh(`${ORIGIN}/a`),
      undefined,
      'never fresh for the fast path',
    );
    assert.equal(cache.entries.lookup(`${ORIGIN}/a`).state, 'stale');
    clock.now += 30_000;
    assert.equal(cache.entries.lookup(`${ORIGIN}/a`).state, 'stale');
    cache.store(`${ORIGIN}/a`, page(['g']));
    assert.equal(cache.entries.lookup(`${ORIGIN}/a`).state, 'fresh');
  });

  it('hard: deleted; by path whatever the origin and query; only pages stored up to `at`', () => {
    const { clock, cache } = clocked();
    cache.store(`${ORIGIN}/p`, page());
    cache.store(`https://shop.example/p?page=2`, page());
    cache.store(`${ORIGIN}/p/q`, page());
    const at = clock.now;
    clock.now += 1;
    cache.store(`${ORIGIN}/later`, page(['g']));
    assert.equal(cache.revalidate({ paths: ['/p'], groups: ['g'], mode: 'hard', at }), 2);
    assert.equal(cache.entries.lookup(`${ORIGIN}/p`).state, 'miss');
    assert.equal(cache.entries.lookup(`https://shop.example/p?page=2`).state, 'miss');
    assert.equal(cache.entries.lookup(`${ORIGIN}/p/q`).state, 'fresh', 'not a prefix match');
    assert.equal(
      cache.entries.lookup(`${ORIGIN}/later`).state,
      'fresh',
      'stored after the revalidation',
    );
    assert.deepEqual([cache.stats.revalidations, cache.stats.revalidatedEntries], [1, 2]);
  });

  it('a render running when a revalidation comes stores its page stale (soft) or not at all (hard)', async () => {
    for (const mode of ['soft', 'hard']) {
      const { clock, cache } = clocked();
      const key = `${ORIGIN}/products/9`;
      let finish;
      const { result } = cache.productions.join(
        key,
        () =>
          new Promise((resolve) => {
            finish = () => {
              cache.store(key, page(['product-9']));
              resolve();
            };
          }),
        new AbortController().signal,
      );
      clock.now += 10;
      // Nothing stored yet: the revalidation affects no page, but the render began before it.
      assert.equal(cache.revalidate({ paths: [], groups: ['product-9'], mode, at: clock.now }), 0);
      clock.now += 10;
      finish();
      await result;
      assert.equal(cache.entries.lookup(key).state, mode === 'soft' ? 'stale' : 'miss', mode);
      // A render that begins after the revalidation stores a fresh page.
      await cache.productions.join(
        key,
        async () => cache.store(key, page(['product-9'])),
        new AbortController().signal,
      ).result;
      assert.equal(cache.entries.lookup(key).state, 'fresh', mode);
    }
  });
});

describe('cache groups: what the page declares, and what is sent', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { CACHE_GROUP_ALIASES: 'surrogate-key,cache-tag' } });
  });
  after(() => origin?.stop());

  it('sends the Cache-Groups the page set through RESPONSE_INIT, and its CDN aliases', async () => {
    for (const answer of [
      await request(origin.url, '/products/42'), // rendered and stored
      await request(origin.url, '/products/42'), // from the cache (fast path)
      await request(origin.url, '/products/42?utm=1'), // not cacheable: rendered per request
    ]) {
      assert.equal(answer.headers['cache-groups'], '"product-42", "catalog"');
      assert.equal(answer.headers['surrogate-key'], 'product-42 catalog');
      assert.equal(answer.headers['cache-tag'], 'product-42,catalog');
    }
  });

  it('sends no group header on a 304, from the cache or from a render', async () => {
    const page = await cached(origin, '/products/43');
    // A query the route does not declare is rendered (fwd=bypass), the plain path is a hit.
    for (const target of ['/products/43', '/products/43?ref=mail']) {
      const headers = { target };
      const notModified = await request(origin.url, target, {
        headers: { 'if-none-match': page.headers.etag },
      });
      assert.equal(notModified.status, 304);
      for (const name of ['cache-groups', 'surrogate-key', 'cache-tag']) {
        assert.equal(
          notModified.headers[name],
          undefined,
          `${name} on a 304 (${JSON.stringify(headers)})`,
        );
      }
    }
  });

  it('has no revalidate endpoint without REVALIDATE_TOKEN: the path is an ordinary one', async () => {
    const post = await revalidate(origin, { groups: ['catalog'] });
    assert.notEqual(post.status, 200);
    assert.equal((await health(origin)).renderCache.revalidations, 0);
    assert.equal((await health(origin)).revalidations.requested, 0);
  });
});

describe('POST /_origin/revalidate: bad requests get their status and change nothing', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { REVALIDATE_TOKEN: TOKEN } });
  });
  after(() => origin?.stop());

  /** Each bad request, the status it gets, and (for 400) a word of its message. */
  const bad = [
    ['no token', { headers: JSON_TYPE, body: '{"groups":["catalog"]}' }, 401],
    [
      'a wrong token',
      {
        headers: { ...JSON_TYPE, authorization: `Bearer ${TOKEN}x` },
        body: '{"groups":["catalog"]}',
      },
      401,
    ],
    [
      'a token of another scheme',
      {
        headers: { ...JSON_TYPE, authorization: `Basic ${TOKEN}` },
        body: '{"groups":["catalog"]}',
      },
      401,
    ],
    ['GET', { method: 'GET', headers: AUTH }, 405],
    [
      'PUT',
      { method: 'PUT', headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":["catalog"]}' },
      405,
    ],
    ['no Content-Type', { headers: AUTH, body: '{"groups":["catalog"]}' }, 415],
    [
      'text/plain',
      { headers: { ...AUTH, 'content-type': 'text/plain' }, body: '{"groups":["catalog"]}' },
      415,
    ],
    [
      'an oversize body',
      {
        headers: { ...AUTH, ...JSON_TYPE },
        body: JSON.stringify({ groups: ['x'.repeat(70_000)] }),
      },
      413,
    ],
    ['bad JSON', { headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":' }, 400, /not JSON/],
    [
      'an unknown mode',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":["catalog"],"mode":"now"}' },
      400,
      /mode/,
    ],
    [
      'too many items',
      {
        headers: { ...AUTH, ...JSON_TYPE },
        body: JSON.stringify({ paths: Array.from({ length: 1001 }, (_, i) => `/p/${i}`) }),
      },
      400,
      /too many/,
    ],
    [
      'a path with a query',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"paths":["/products/777?x=1"]}' },
      400,
      /paths/,
    ],
    [
      'a relative path',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"paths":["products/777"]}' },
      400,
      /paths/,
    ],
    [
      'a group with a control character',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":["catalog\\n"]}' },
      400,
      /groups/,
    ],
    [
      'an empty group',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":[""]}' },
      400,
      /groups/,
    ],
    [
      'nothing to do',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"paths":[],"groups":[]}' },
      400,
      /nothing/,
    ],
    [
      'an unknown property',
      { headers: { ...AUTH, ...JSON_TYPE }, body: '{"groups":["catalog"],"tags":["x"]}' },
      400,
      /unknown/,
    ],
    ['not an object', { headers: { ...AUTH, ...JSON_TYPE }, body: '["catalog"]' }, 400, /object/],
  ];

  it('answers each with its status, JSON and no-store, and no page is revalidated', async () => {
    const witness = await cached(origin, '/products/777');
    for (const [what, options, status, message] of bad) {
      const answer = await request(origin.url, PATH, { method: 'POST', ...options });
      assert.equal(answer.status, status, what);
      assert.equal(answer.headers['cache-control'], 'no-store', what);
      if (status === 401) assert.equal(answer.headers['www-authenticate'], 'Bearer', what);
      if (status === 405) assert.equal(answer.headers.allow, 'POST', what);
      if (message) assert.match(JSON.parse(answer.text).error, message, what);
    }
    const { renderCache, revalidations } = await health(origin);
    assert.equal(renderCache.revalidations, 0);
    assert.equal(revalidations.requested, 0);
    const still = await request(origin.url, '/products/777');
    assert.match(still.headers['cache-status'], /^render-cache; hit; ttl=\d+$/);
    assert.equal(still.headers.etag, witness.headers.etag);
  });

  it('stops reading a chunked body past 64 KiB and answers 413', async () => {
    const answer = await new Promise((resolve, reject) => {
      const req = httpRequest(
        `${origin.url}${PATH}`,
        { method: 'POST', headers: { ...AUTH, ...JSON_TYPE, 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res));
        },
      );
      req.on('error', reject);
      // 80 KiB in chunks; the answer may come (and the socket close) before the last is written.
      for (let i = 0; i < 20; i++) req.write('x'.repeat(4096));
      req.end();
    });
    assert.equal(answer.statusCode, 413);
    assert.equal((await health(origin)).status, 'ok');
  });

  it('is never answered before Koa, for any method', async () => {
    const before = (await health(origin)).answeredBeforeKoa;
    for (const method of ['GET', 'HEAD', 'POST']) {
      const answer = await request(origin.url, PATH, { method, headers: AUTH });
      assert.ok([405, 415].includes(answer.status), `${method}: ${answer.status}`);
    }
    // /healthz itself is answered by Koa too: the count is the same.
    assert.equal((await health(origin)).answeredBeforeKoa, before);
  });

  it('property: any body and headers get 200, 400, 401, 405, 413 or 415, never a 5xx', async () => {
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      fc
        .record(
          {
            paths: fc.array(fc.oneof(fc.string({ maxLength: 30 }), fc.constant('/x/y')), {
              maxLength: 4,
            }),
            groups: fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 }),
            mode: fc.oneof(fc.constantFrom('soft', 'hard'), fc.string({ maxLength: 5 })),
          },
          { requiredKeys: [] },
        )
        .map((value) => JSON.stringify(value)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH'),
        fc.constantFrom(
          `Bearer ${TOKEN}`,
          `Bearer ${TOKEN}`,
          `bearer  ${TOKEN}`,
          'Bearer x',
          `${TOKEN}`,
          undefined,
        ),
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'text/json',
          undefined,
        ),
        body,
        async (method, authorization, type, text) => {
          const headers = {};
          if (authorization !== undefined) headers.authorization = authorization;
          if (type !== undefined) headers['content-type'] = type;
          const answer = await request(origin.url, PATH, { method, headers, body: text });
          assert.ok(
            [200, 400, 401, 405, 413, 415].includes(answer.status),
            `${answer.status} ${answer.text}`,
          );
          assert.equal(answer.headers['cache-control'], 'no-store');
          assert.doesNotMatch(answer.text, /\n\s+at /, 'no stack trace');
        },
      ),
      { numRuns: 120 },
    );
    assert.equal((await health(origin)).status, 'ok');
  });
});

describe('revalidation: by path and by group, soft and hard', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { REVALIDATE_TOKEN: TOKEN } });
  });
  after(() => origin?.stop());

  it('soft, by group: the next request gets the stale page at once, one render refreshes it', async () => {
    const page = await cached(origin, '/products/501');
    const other = await cached(origin, '/products/502');
    await idle(origin);
    const rendersBefore = (await health(origin)).renders.started;
    const report = await revalidate(origin, { groups: ['product-501'] });
    assert.equal(report.status, 200);
    assert.equal(report.headers['cache-control'], 'no-store');
    const body = JSON.parse(report.text);
    assert.deepEqual(
      {
        mode: body.mode,
        groups: body.groups,
        paths: body.paths,
        affected: body.affected,
        channels: body.channels,
        cdn: body.cdn,
      },
      { mode: 'soft', groups: ['product-501'], paths: [], affected: 1, channels: [], cdn: null },
    );
    const stale = await request(origin.url, '/products/501');
    assert.equal(stale.headers['cache-status'], 'render-cache; hit; ttl=0; detail=revalidated');
    // Stale for any cache behind it too: its Age is at least its s-maxage (RFC 9111 §4.2.3).
    assert.equal(stale.headers.age, '60');
    assert.deepEqual(stale.body, page.body);
    await idle(origin);
    assert.equal(
      (await health(origin)).renders.started,
      rendersBefore + 1,
      'one background render',
    );
    const fresh = await request(origin.url, '/products/501');
    assert.match(fresh.headers['cache-status'], /^render-cache; hit; ttl=\d+$/);
    assert.equal(fresh.headers.age, '0');
    // Another product's page is not in the group.
    const untouched = await request(origin.url, '/products/502');
    assert.match(untouched.headers['cache-status'], /^render-cache; hit; ttl=\d+$/);
    assert.equal(untouched.headers.etag, other.headers.etag);
  });

  it('soft, by a group every product shares: each page is stale once', async () => {
    await cached(origin, '/products/511');
    await cached(origin, '/products/512');
    await idle(origin);
    const body = JSON.parse((await revalidate(origin, { groups: ['catalog'], mode: 'soft' })).text);
    assert.ok(body.affected >= 2, `affected ${body.affected}`);
    for (const path of ['/products/511', '/products/512']) {
      assert.match(
        (await request(origin.url, path)).headers['cache-status'],
        /detail=revalidated/,
        path,
      );
    }
  });

  it('hard, by path: the next request renders', async () => {
    await cached(origin, '/products/521');
    await idle(origin);
    const rendersBefore = (await health(origin)).renders.started;
    const body = JSON.parse(
      (await revalidate(origin, { paths: ['/products/521'], mode: 'hard' })).text,
    );
    assert.equal(body.affected, 1);
    const next = await request(origin.url, '/products/521');
    assert.equal(next.headers['cache-status'], 'render-cache; fwd=uri-miss; stored');
    assert.equal((await health(origin)).renders.started, rendersBefore + 1);
    assert.match((await request(origin.url, '/products/521')).headers['cache-status'], /hit/);
  });

  it('leaves a page rendered after the revalidation alone, and counts what it did', async () => {
    const body = JSON.parse(
      (await revalidate(origin, { paths: ['/products/531'], mode: 'hard' })).text,
    );
    assert.equal(body.affected, 0, 'nothing cached yet');
    await cached(origin, '/products/531');
    const { renderCache, revalidations } = await health(origin);
    assert.equal(revalidations.requested, 4);
    assert.equal(renderCache.revalidations, 4);
  });
});

describe('npm run revalidate (scripts/revalidate.mjs)', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { REVALIDATE_TOKEN: TOKEN } });
  });
  after(() => origin?.stop());

  /** The script's exit code and output. */
  async function run(args, env) {
    try {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'scripts/revalidate.mjs'), ...args],
        { env: { ...process.env, REVALIDATE_TOKEN: '', ...env }, timeout: 30_000 },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      return { code: error.code, stdout: error.stdout, stderr: error.stderr };
    }
  }

  it('revalidates by group and path and prints the report', async () => {
    await cached(origin, '/products/701');
    const { code, stdout } = await run(
      ['--group', 'product-701', '--path', '/products/702', '--hard', '--url', origin.url],
      { REVALIDATE_TOKEN: TOKEN },
    );
    assert.equal(code, 0);
    const report = JSON.parse(stdout);
    assert.deepEqual(
      { mode: report.mode, groups: report.groups, paths: report.paths, affected: report.affected },
      { mode: 'hard', groups: ['product-701'], paths: ['/products/702'], affected: 1 },
    );
    assert.match((await request(origin.url, '/products/701')).headers['cache-status'], /uri-miss/);
  });

  it('exits 1 with one clear line when the token is missing, wrong, or the origin is not there', async () => {
    const noToken = await run(['--group', 'x', '--url', origin.url], {});
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /^revalidate: REVALIDATE_TOKEN is not set/);
    const wrong = await run(['--group', 'x', '--url', origin.url], {
      REVALIDATE_TOKEN: `${TOKEN}x`,
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /answered 401: a valid "Authorization: Bearer/);
    const nothing = await run(['--url', origin.url], { REVALIDATE_TOKEN: TOKEN });
    assert.equal(nothing.code, 1);
    assert.match(nothing.stderr, /nothing to revalidate/);
    const port = await closedPort();
    const gone = await run(['--group', 'x', '--url', `http://127.0.0.1:${port}`], {
      REVALIDATE_TOKEN: TOKEN,
    });
    assert.equal(gone.code, 1);
    assert.equal(
      gone.stderr.trim(),
      `revalidate: cannot reach http://127.0.0.1:${port}/_origin/revalidate: ECONNREFUSED`,
    );
  });
});

describe('revalidation across cluster workers (WORKERS=2, no Redis)', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { REVALIDATE_TOKEN: TOKEN, WORKERS: '2' } });
    // Until both listen, every connection goes to the first (fillBoth would fill one cache only).
    await workersListening(origin, 2);
  });
  after(() => origin?.stop());

  /** /healthz of each worker by id, polled (new connections go to either worker) until both answered. */
  async function everyWorker() {
    const byWorker = new Map();
    for (let i = 0; i < 100 && byWorker.size < 2; i++) {
      const answer = await health(origin);
      byWorker.set(answer.worker, answer);
    }
    assert.equal(byWorker.size, 2, 'both workers answered /healthz');
    return byWorker;
  }

  /**
   * Requests `path` until both workers have stored it: a worker stores a page once (requests are
   * sequential), so two `stored` answers mean each holds a copy.
   */
  async function fillBoth(path) {
    let stored = 0;
    for (let i = 0; i < 100 && stored < 2; i++) {
      const answer = await request(origin.url, path);
      if (answer.headers['cache-status'].endsWith('; stored')) stored++;
    }
    assert.equal(stored, 2, `${path} did not reach both workers' caches`);
  }

  /** How much each worker's revalidatedEntries grew since `before`, once each grew by `by` (up to 1 s). */
  async function revalidatedSince(before, by) {
    let grown;
    await waitFor(
      async () => {
        grown = new Map(
          [...(await everyWorker())].map(([worker, answer]) => [
            worker,
            answer.renderCache.revalidatedEntries - before.get(worker),
          ]),
        );
        return [...grown.values()].every((count) => count >= by);
      },
      {
        what: `${by} more revalidated entries in every worker`,
        timeoutMs: 1000,
        seen: () => `grown by worker: ${JSON.stringify([...grown])}`,
      },
    );
    return grown;
  }

  const revalidatedEntries = async () =>
    new Map(
      [...(await everyWorker())].map(([worker, answer]) => [
        worker,
        answer.renderCache.revalidatedEntries,
      ]),
    );

  it('a revalidation sent to one worker reaches the other within 1 s', async () => {
    await fillBoth('/products/601');
    const before = await revalidatedEntries();
    const report = JSON.parse(
      (await revalidate(origin, { groups: ['product-601'], mode: 'hard' })).text,
    );
    // The other worker said it applied it before the answer went out.
    assert.deepEqual(report.channels, [{ name: 'cluster', ok: true, applied: 1 }]);
    assert.equal(report.affected, 1);
    assert.deepEqual(
      [...(await revalidatedSince(before, 1)).values()],
      [1, 1],
      'each worker deleted its copy',
    );
    const workers = await everyWorker();
    for (const [worker, answer] of workers) {
      assert.equal(answer.renderCache.entries, 0, `worker ${worker} still holds the page`);
    }
    const counts = [...workers.values()].map((answer) => answer.revalidations);
    assert.deepEqual(
      counts.map(({ requested, received }) => requested + received).sort(),
      [1, 1],
      'one asked, the other heard it once',
    );
    // Every answer now is a new render or a hit on one: none is the old page served fresh.
    for (let i = 0; i < 6; i++) {
      const answer = await request(origin.url, '/products/601');
      assert.match(answer.headers['cache-status'], /fwd=uri-miss|hit; ttl=\d+$/);
    }
  });

  it('soft: every worker serves its old copy as stale, never as fresh', async () => {
    await fillBoth('/products/602');
    const before = await revalidatedEntries();
    await revalidate(origin, { paths: ['/products/602'] });
    assert.deepEqual(
      [...(await revalidatedSince(before, 1)).values()],
      [1, 1],
      'each worker marked its copy',
    );
    // The first answer of each worker is the stale page; its refresh makes the next ones fresh.
    const statuses = [];
    for (let i = 0; i < 2; i++)
      statuses.push((await request(origin.url, '/products/602')).headers['cache-status']);
    for (const status of statuses) {
      assert.match(status, /detail=revalidated|hit; ttl=\d+$/);
    }
  });
});

describe('the CDN purge hook', () => {
  let cdn;
  const calls = [];
  before(async () => {
    cdn = createServer((req, res) => {
      calls.push({ method: req.method, url: req.url, key: req.headers['fastly-key'] });
      res.statusCode = req.url.includes('fail-me') ? 500 : 200;
      res.end('{}');
    });
    await listenOnFreePort(cdn);
  });
  after(() => cdn?.close());

  it('calls the CDN once per group with the token and mode, and reports a failure', async () => {
    const origin = await startOrigin({
      env: {
        REVALIDATE_TOKEN: TOKEN,
        CDN_PURGE_URL: `http://127.0.0.1:${cdn.address().port}/service/abc/purge/{group}?mode={mode}`,
        CDN_PURGE_METHOD: 'PURGE',
        CDN_PURGE_TOKEN: 'cdn-secret',
        CDN_PURGE_TOKEN_HEADER: 'Fastly-Key',
      },
    });
    try {
      const ok = JSON.parse(
        (await revalidate(origin, { groups: ['product-42', 'a b/c'], paths: ['/x'] })).text,
      );
      // A path is purged by the tag its pages carry (the xkey alias): `path:` and the path encoded.
      assert.deepEqual(ok.cdn, { ok: true, requests: 3, skipped: 0, failed: [] });
      assert.deepEqual(calls.map(({ method, url, key }) => `${method} ${url} ${key}`).sort(), [
        'PURGE /service/abc/purge/a%20b%2Fc?mode=soft cdn-secret',
        'PURGE /service/abc/purge/path:%2Fx?mode=soft cdn-secret',
        'PURGE /service/abc/purge/product-42?mode=soft cdn-secret',
      ]);
      const failed = await revalidate(origin, { groups: ['fail-me', 'catalog'], mode: 'hard' });
      assert.equal(
        failed.status,
        200,
        'the cache was revalidated: the CDN failure is reported, not a failure of the call',
      );
      assert.deepEqual(JSON.parse(failed.text).cdn, {
        ok: false,
        requests: 2,
        skipped: 0,
        failed: [{ item: 'fail-me', status: 500 }],
      });
      const warning = logLines(origin).find((line) => line.msg === 'CDN purge: some items failed');
      assert.deepEqual(warning?.failed, [{ item: 'fail-me', status: 500 }]);
    } finally {
      await origin.stop();
    }
  });

  it('reports a CDN that refuses the connection, per path for a {path} template', async () => {
    const port = await closedPort();
    const origin = await startOrigin({
      env: { REVALIDATE_TOKEN: TOKEN, CDN_PURGE_URL: `http://127.0.0.1:${port}/purge{path}` },
    });
    try {
      const report = JSON.parse(
        (await revalidate(origin, { paths: ['/products/1'], groups: ['g'] })).text,
      );
      assert.deepEqual(report.cdn, {
        ok: false,
        requests: 1,
        skipped: 1,
        failed: [{ item: '/products/1', error: 'ECONNREFUSED' }],
      });
      assert.ok(
        logLines(origin).some(
          (line) => line.level === 40 && line.msg === 'CDN purge: some items failed',
        ),
      );
    } finally {
      await origin.stop();
    }
  });
});
