// The render cache's rules and store on their own (Node runs the TypeScript sources directly, types
// stripped): what may be stored and shared, keys, freshness with a clock the test moves, coalescing,
// bounds and purging. test/server/render-cache.test.mjs proves the same over HTTP on the real build.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  cacheKey,
  routeCacheRules,
  sharedCachePolicy,
  storablePolicy,
} from '../../server/render-cache/policy.ts';
import { strongEtag } from '../../server/entity-tag.ts';
import { RenderCache } from '../../server/render-cache/store.ts';
import { RenderLimiter } from '../../server/pages/render-limiter.ts';

const ORIGIN = 'http://localhost:4000';
const SHARED = 'public, s-maxage=60, stale-while-revalidate=600, stale-if-error=3600';

describe('sharedCachePolicy (RFC 9111, RFC 5861)', () => {
  it('reads s-maxage before max-age, and the stale windows', () => {
    assert.deepEqual(sharedCachePolicy(SHARED), {
      freshMs: 60_000,
      staleWhileRevalidateMs: 600_000,
      staleIfErrorMs: 3_600_000,
    });
    assert.deepEqual(sharedCachePolicy('max-age=10, s-maxage=30'), {
      freshMs: 30_000,
      staleWhileRevalidateMs: 0,
      staleIfErrorMs: 0,
    });
    assert.deepEqual(sharedCachePolicy('Public, Max-Age="20"'), {
      freshMs: 20_000,
      staleWhileRevalidateMs: 0,
      staleIfErrorMs: 0,
    });
    assert.deepEqual(
      sharedCachePolicy('s-maxage=0, stale-while-revalidate=5').staleWhileRevalidateMs,
      5000,
    );
  });

  it('never stores what a shared cache must not, whatever else the header says', () => {
    const forbidding = fc.constantFrom(
      'private',
      'no-store',
      'no-cache',
      'private="set-cookie"',
      'no-cache="x"',
      'NO-STORE',
    );
    const other = fc.constantFrom(
      'public',
      's-maxage=60',
      'max-age=60',
      'stale-while-revalidate=60',
      'immutable',
      'stale-if-error=5',
    );
    fc.assert(
      fc.property(
        fc.array(other, { maxLength: 4 }),
        forbidding,
        fc.nat(4),
        (others, forbid, at) => {
          const parts = [...others];
          parts.splice(Math.min(at, parts.length), 0, forbid);
          assert.equal(sharedCachePolicy(parts.join(', ')), undefined, parts.join(', '));
        },
      ),
    );
  });

  it('refuses what it cannot read, and serves nothing stale under must-revalidate', () => {
    for (const header of [
      undefined,
      '',
      'public',
      'max-age=-1',
      'max-age=1.5',
      'max-age=abc',
      's-maxage=60, s-maxage=70',
      'max-age=60;x',
      'max-age="60',
      's-maxage=0',
    ]) {
      assert.equal(sharedCachePolicy(header), undefined, String(header));
    }
    for (const revalidate of ['must-revalidate', 'proxy-revalidate']) {
      assert.deepEqual(sharedCachePolicy(`${SHARED}, ${revalidate}`), {
        freshMs: 60_000,
        staleWhileRevalidateMs: 0,
        staleIfErrorMs: 0,
      });
    }
  });
});

describe('storablePolicy', () => {
  const headers = (init) => new Headers({ 'cache-control': SHARED, ...init });
  it('stores 200 or the status the route declares, with a shared-cache policy', () => {
    assert.ok(storablePolicy(200, undefined, headers({})));
    assert.ok(storablePolicy(404, 404, headers({})));
    assert.ok(storablePolicy(200, 404, headers({ vary: 'Accept-Encoding' })));
  });
  it('never stores other statuses, Set-Cookie, Vary on anything else, or a private answer', () => {
    assert.equal(storablePolicy(404, undefined, headers({})), undefined);
    assert.equal(storablePolicy(500, undefined, headers({})), undefined);
    assert.equal(storablePolicy(301, undefined, headers({})), undefined);
    assert.equal(storablePolicy(200, undefined, headers({ 'set-cookie': 'session=1' })), undefined);
    assert.equal(
      storablePolicy(200, undefined, headers({ vary: 'Accept-Encoding, Cookie' })),
      undefined,
    );
    assert.equal(storablePolicy(200, undefined, headers({ vary: '*' })), undefined);
    assert.equal(
      storablePolicy(200, undefined, headers({ 'cache-control': 'private, max-age=60' })),
      undefined,
    );
    assert.equal(storablePolicy(200, undefined, new Headers()), undefined);
  });
});

describe('cacheKey', () => {
  const rules = routeCacheRules({
    'Cache-Control': SHARED,
    'No-Vary-Search': 'params, except=("page" "sort")',
    'Render-Cache-Harmless-Cookies': '_ga, consent',
  });

  it('needs a shared-cache policy on the route', () => {
    assert.equal(routeCacheRules(undefined), undefined);
    assert.equal(routeCacheRules({ 'Cache-Control': 'no-cache' }), undefined);
    assert.equal(routeCacheRules({ 'X-Frame-Options': 'DENY' }), undefined);
  });

  it('never lets a request with credentials or other cookies share a page', () => {
    const cookieName = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cookieName, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 4 }),
        fc.option(fc.string()),
        (cookies, authorization) => {
          const cookie = cookies.map(([name, value]) => `${name}=${value}`).join('; ');
          const decision = cacheKey(rules, ORIGIN, '/products/1', '', {
            cookie,
            authorization: authorization ?? undefined,
          });
          const onlyHarmless = cookies.every(([name]) => name === '_ga' || name === 'consent');
          if (authorization !== null) {
            assert.deepEqual(decision, { bypass: 'authorization' });
          } else if (!onlyHarmless) {
            assert.deepEqual(decision, { bypass: 'cookie' });
          } else {
            assert.deepEqual(decision, { key: `${ORIGIN}/products/1` });
          }
        },
      ),
    );
    const strict = routeCacheRules({ 'Cache-Control': SHARED });
    assert.deepEqual(cacheKey(strict, ORIGIN, '/a', '', { cookie: '_ga=1' }), { bypass: 'cookie' });
  });

  it('keys only canonical paths: any other spelling is rendered', () => {
    for (const path of [
      '//products/1',
      '/products//1',
      '/products/1/',
      '/products/1;x=1',
      '/products;/1',
      '/products/%31',
      '/products/./1',
      '/products/../1',
      '/products/1(aux:x)',
      '/products/1%2F2',
      '/products/1\\x',
    ]) {
      assert.deepEqual(cacheKey(rules, ORIGIN, path, '', {}), { bypass: 'path' }, path);
    }
    fc.assert(
      fc.property(fc.webPath(), (path) => {
        const decision = cacheKey(rules, ORIGIN, path || '/', '', {});
        if ('key' in decision) {
          // A key names one path: decoding and re-parsing it gives the same path.
          const parsed = new URL(decision.key);
          assert.equal(parsed.pathname, path || '/');
          assert.equal(decodeURIComponent(parsed.pathname), parsed.pathname);
          assert.ok(
            !/\/\/|;|\/$|\/\.\.?(\/|$)/.test(parsed.pathname.slice(1)) || parsed.pathname === '/',
            parsed.pathname,
          );
        }
      }),
    );
  });

  it('keeps the declared query parameters only, in one order, and renders exactly the key', () => {
    const params = fc.array(
      fc.tuple(
        fc.constantFrom('page', 'sort', 'utm_source', 'q', 'x'),
        fc.string({ maxLength: 6 }),
      ),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(params, fc.func(fc.boolean()), (pairs, shuffle) => {
        const query = new URLSearchParams(pairs).toString();
        const reordered = new URLSearchParams(
          [...pairs].sort((a, b) => (shuffle(a[0], b[0]) ? -1 : 1)),
        ).toString();
        const a = cacheKey(rules, ORIGIN, '/list', query, {});
        const b = cacheKey(rules, ORIGIN, '/list', reordered, {});
        const kept = pairs.filter(([name]) => name === 'page' || name === 'sort');
        if (new Set(kept.map(([name]) => name)).size === kept.length) {
          // Reordering different names selects the same page (one name's repeated values keep their order).
          assert.deepEqual(a, b);
        }
        const url = new URL(a.key);
        assert.equal(url.origin + url.pathname, `${ORIGIN}/list`);
        assert.deepEqual(
          [...url.searchParams.keys()].filter((name) => name !== 'page' && name !== 'sort'),
          [],
        );
      }),
    );
    assert.deepEqual(cacheKey(rules, ORIGIN, '/list', 'utm_source=mail', {}), {
      key: `${ORIGIN}/list`,
    });
    assert.deepEqual(cacheKey(rules, ORIGIN, '/list', 'sort=a&page=2&utm_source=x', {}), {
      key: `${ORIGIN}/list?page=2&sort=a`,
    });
  });

  it('renders a query string unless the route declares which parameters matter', () => {
    const undeclared = routeCacheRules({ 'Cache-Control': SHARED });
    assert.deepEqual(cacheKey(undeclared, ORIGIN, '/list', 'page=2', {}), { bypass: 'query' });
    assert.deepEqual(cacheKey(undeclared, ORIGIN, '/list', '', {}), { key: `${ORIGIN}/list` });
    const allIgnored = routeCacheRules({ 'Cache-Control': SHARED, 'No-Vary-Search': 'params' });
    assert.deepEqual(cacheKey(allIgnored, ORIGIN, '/list', 'page=2', {}), {
      key: `${ORIGIN}/list`,
    });
    const someIgnored = routeCacheRules({
      'Cache-Control': SHARED,
      'No-Vary-Search': 'params=("utm_source")',
    });
    assert.deepEqual(cacheKey(someIgnored, ORIGIN, '/list', 'utm_source=a&page=2', {}), {
      key: `${ORIGIN}/list?page=2`,
    });
  });
});

/** A cache with a clock the test moves, and a page of `size` bytes under `policy`. */
function clockedCache(maxBytes = 1024 * 1024) {
  const clock = { now: 1_000_000 };
  return { clock, cache: new RenderCache(maxBytes, () => clock.now) };
}
function page(body = 'page', policy = sharedCachePolicy(SHARED)) {
  const buffer = Buffer.from(body);
  return {
    status: 200,
    headers: ['ETag', strongEtag(buffer)],
    body: buffer,
    etag: strongEtag(buffer),
    storedAt: 0,
    policy,
    refreshFailed: false,
  };
}

describe('RenderCache', () => {
  it('is fresh for s-maxage, stale for stale-while-revalidate, then expired with stale-if-error left', () => {
    const { clock, cache } = clockedCache();
    cache.store('k', page());
    assert.equal(cache.lookup('k').state, 'fresh');
    clock.now += 59_999;
    assert.equal(cache.lookup('k').state, 'fresh');
    clock.now += 1;
    assert.equal(cache.lookup('k').state, 'stale');
    clock.now += 599_999;
    assert.equal(cache.lookup('k').state, 'stale');
    clock.now += 1;
    const expired = cache.lookup('k');
    assert.equal(expired.state, 'expired');
    assert.equal(expired.usableOnError, true, 'within stale-if-error (1 h)');
    clock.now += 3_000_000; // 60 s + 1 h since stored: the last moment stale-if-error allows
    assert.equal(cache.lookup('k').usableOnError, false);
    clock.now += 1;
    assert.equal(cache.lookup('k').state, 'miss', 'gone once no rule can use it');
  });

  it('keeps a page whose refresh failed usable up to stale-if-error, then renders normally', async () => {
    const { clock, cache } = clockedCache();
    cache.store('k', page());
    clock.now += 600_000;
    assert.equal(cache.lookup('k').state, 'stale');
    cache.refreshInBackground(
      'k',
      () => Promise.reject(new Error('render failed')),
      () => {},
    );
    await new Promise(setImmediate);
    clock.now += 100_000; // past stale-while-revalidate (660 s), within stale-if-error (3660 s)
    assert.equal(cache.lookup('k').state, 'stale');
    clock.now += 3_000_000;
    assert.equal(cache.lookup('k').state, 'miss');
    assert.equal(cache.stats.refreshFailures, 1);
  });

  it('renders once for concurrent misses; every waiter gets its result or its failure', async () => {
    const { cache } = clockedCache();
    let renders = 0;
    let finish;
    const render = () => {
      renders++;
      return new Promise((resolve, reject) => (finish = { resolve, reject }));
    };
    const shared = Array.from({ length: 50 }, () =>
      cache.render('k', render, new AbortController().signal),
    );
    assert.equal(renders, 1);
    assert.deepEqual(shared.map((s) => s.collapsed).filter(Boolean).length, 49);
    finish.resolve('the page');
    assert.deepEqual(
      new Set(await Promise.all(shared.map((s) => s.result))),
      new Set(['the page']),
    );
    assert.equal(cache.stats.coalescedWaits, 49);

    const failing = Array.from({ length: 5 }, () =>
      cache.render('k', render, new AbortController().signal),
    );
    assert.equal(renders, 2, 'a finished render is not shared with later requests');
    const failure = new Error('render failed');
    finish.reject(failure);
    for (const { result } of failing) {
      await assert.rejects(result, (error) => error === failure);
    }
    assert.equal(cache.rendering('k'), false);
  });

  it('aborts a shared render only once every waiter has gone, and never one a refresh waits for', () => {
    const { cache } = clockedCache();
    let signal;
    const render = (s) => {
      signal = s;
      return new Promise(() => {});
    };
    const waiters = [new AbortController(), new AbortController(), new AbortController()];
    for (const waiter of waiters) {
      cache.render('k', render, waiter.signal);
    }
    waiters[0].abort(new Error('gone'));
    waiters[1].abort(new Error('gone'));
    assert.equal(signal.aborted, false, 'one request still waits');
    waiters[2].abort(new Error('gone'));
    assert.equal(signal.aborted, true, 'nobody waits: the render may leave the queue');

    const waiter = new AbortController();
    cache.refreshInBackground('refreshed', render, () => {});
    cache.render('refreshed', () => assert.fail('collapsed'), waiter.signal);
    waiter.abort(new Error('gone'));
    assert.equal(signal.aborted, false, 'a background refresh keeps its render');
  });

  it('gives a request that joins a background refresh its result, failed or not', async () => {
    const { cache } = clockedCache();
    const failures = [];
    cache.refreshInBackground(
      'k',
      async () => ({ page: 'new', broken: true }),
      (error) => failures.push(error.message),
      (result) => (result.broken ? new Error('broken') : undefined),
    );
    const { result, collapsed } = cache.render(
      'k',
      () => assert.fail('collapsed'),
      new AbortController().signal,
    );
    assert.equal(collapsed, true);
    assert.deepEqual(await result, { page: 'new', broken: true });
    assert.deepEqual(failures, ['broken'], 'still counted as a failed refresh');
    assert.equal(cache.stats.refreshFailures, 1);
  });

  it('stays within its bytes under a flood of 100,000 distinct keys, and skips pages larger than itself', () => {
    const maxBytes = 2 * 1024 * 1024;
    const { cache } = clockedCache(maxBytes);
    for (let i = 0; i < 100_000; i++) {
      cache.store(`${ORIGIN}/products/${i}`, page('x'.repeat(500 + (i % 7) * 1000)));
      if (i % 1000 === 0) {
        assert.ok(cache.stats.bytes <= maxBytes, `${cache.stats.bytes} bytes after ${i} pages`);
      }
    }
    assert.ok(cache.stats.bytes <= maxBytes);
    assert.ok(cache.stats.entries < 2000, `${cache.stats.entries} entries`);
    assert.equal(
      cache.lookup(`${ORIGIN}/products/99999`).state,
      'fresh',
      'the most recent page is kept',
    );
    assert.equal(cache.lookup(`${ORIGIN}/products/0`).state, 'miss', 'the least recent went first');
    cache.store('huge', page('x'.repeat(maxBytes + 1)));
    assert.equal(cache.lookup('huge').state, 'miss');
    assert.ok(cache.stats.bytes <= maxBytes);
  });

  it('purges one path, a prefix, or everything', () => {
    const { cache } = clockedCache();
    for (const path of [
      '/products/1',
      '/products/1?page=2',
      '/products/12',
      '/productsX',
      '/about',
    ]) {
      cache.store(`${ORIGIN}${path}`, page());
    }
    assert.equal(cache.purge('/products/1'), 2, 'the path with any query');
    assert.equal(cache.purge('/products/'), 1, 'under the prefix');
    assert.equal(cache.stats.entries, 2);
    cache.clear();
    assert.equal(cache.stats.entries, 0);
  });
});

describe('RenderLimiter background lane', () => {
  it('gives a slot to background work only when no request waits', async () => {
    const limiter = new RenderLimiter(1, 10);
    const order = [];
    let release;
    const blocker = limiter.run(
      () => new Promise((resolve) => (release = resolve)),
      new AbortController().signal,
    );
    const task = (name) => async () => order.push(name);
    const background = limiter.runInBackground(task('background'));
    const foreground = [
      limiter.run(task('request 1'), new AbortController().signal),
      limiter.run(task('request 2'), new AbortController().signal),
    ];
    assert.deepEqual(limiter.stats, { running: 1, queued: 2, backgroundQueued: 1 });
    release();
    await Promise.all([blocker, background, ...foreground]);
    assert.deepEqual(order, ['request 1', 'request 2', 'background']);
    assert.deepEqual(limiter.stats, { running: 0, queued: 0, backgroundQueued: 0 });
  });
});
