// The render cache over real HTTP on the production build: /products/:id declares
// `s-maxage=60, stale-while-revalidate=600, stale-if-error=86400` (test/app/src/app/app.routes.server.ts).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertCacheIsolation } from '../helpers/cache-isolation.mjs';
import {
  ROOT,
  health,
  logLines,
  at,
  rawRequest,
  rendersIdle as idle,
  request,
  signalFixture,
  startOrigin,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

describe('render cache: what is stored and what is served', () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin?.stop());

  it('renders a page once, then answers it from memory with Age, the same ETag and a 304', async () => {
    const first = await request(origin.url, at('/products/101'));
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-status'], 'render-cache; fwd=uri-miss; stored');
    assert.equal(
      first.headers['cache-control'],
      's-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
    );
    assert.match(first.headers.etag, /^"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/, 'a strong validator');
    const second = await request(origin.url, at('/products/101'));
    assert.equal(
      second.headers['cache-status'],
      `render-cache; hit; ttl=${60 - Number(second.headers.age)}`,
    );
    assert.equal(second.headers.age, '0');
    assert.equal(second.headers.etag, first.headers.etag);
    assert.deepEqual(second.body, first.body);
    const head = await request(origin.url, at('/products/101'), { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.match(head.headers['cache-status'], /hit/);
    const revalidated = await request(origin.url, at('/products/101'), {
      headers: { 'if-none-match': first.headers.etag },
    });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.headers.etag, first.headers.etag);
    assert.equal(revalidated.headers['cache-control'], first.headers['cache-control']);
  });

  it('answers a fresh page before Koa, as it answers a prerendered one', async () => {
    await request(origin.url, at('/products/111'));
    const before = (await health(origin)).answeredBeforeKoa;
    const hit = await request(origin.url, at('/products/111'));
    const notModified = await request(origin.url, at('/products/111'), {
      headers: { 'if-none-match': hit.headers.etag },
    });
    assert.match(hit.headers['cache-status'], /hit/);
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers['content-type'], undefined);
    assert.equal((await health(origin)).answeredBeforeKoa - before, 2);
    // A visitor's cookies share the page there too; a query or another spelling goes through Koa.
    await request(origin.url, at('/products/111'), { headers: { cookie: 'a=b' } });
    await request(origin.url, at('/products/111?x=1'));
    await request(origin.url, at('/products/111/'));
    assert.equal((await health(origin)).answeredBeforeKoa - before, 3);
  });

  it('never caches a route without a policy: prerendered, client-only, the 404 page', async () => {
    const before = (await health(origin)).renderCache;
    for (const path of ['/', '/dashboard', '/no-such-page', '/no-such-page']) {
      const res = await request(origin.url, at(path));
      assert.equal(res.headers['cache-status'], undefined, path);
    }
    // The product route's 404 (an unknown id) is rendered each time: only 200s are stored.
    for (let i = 0; i < 2; i++) {
      const res = await request(origin.url, at('/products/abc'));
      assert.equal(res.status, 404);
      assert.equal(res.headers['cache-status'], 'render-cache; fwd=uri-miss');
    }
    const after = (await health(origin)).renderCache;
    assert.equal(after.entries, before.entries);
    assert.equal(after.hits, before.hits);
  });

  it('serves every visitor the cached page: cookies and credentials neither bypass it nor change it', async () => {
    await request(origin.url, at('/products/202'));
    const anonymous = await request(origin.url, at('/products/202'));
    const cases = [
      { cookie: 'session=alice' },
      { cookie: '_ga=GA1.2.3; sid=s3cr3t; a=1' },
      { authorization: 'Bearer alice' },
      { authorization: 'Basic Ym9iOmJvYg==', cookie: 'session=bob' },
    ];
    const before = (await health(origin)).renderCache;
    for (const headers of cases) {
      const res = await request(origin.url, at('/products/202'), { headers });
      assert.equal(res.status, 200);
      assert.match(
        res.headers['cache-status'],
        /^render-cache; hit; ttl=\d+$/,
        JSON.stringify(headers),
      );
      assert.deepEqual(res.body, anonymous.body, 'the same page, whatever the visitor carries');
    }
    const after = (await health(origin)).renderCache;
    assert.equal(after.hits - before.hits, cases.length);
    assert.equal(after.entries, before.entries, 'no page of its own for anyone');
  });

  it('sends other spellings of a cached path to its one spelling, and renders what the router reads apart', async () => {
    await request(origin.url, at('/products/303'));
    // Spellings the router reads as /products/303: a 308 there, never the entry under another key.
    for (const spelling of [
      '//products/303',
      '/products//303',
      '/products/303/',
      '/products/%33%30%33',
    ]) {
      const res = await request(origin.url, at(spelling));
      assert.equal(res.status, 308, spelling);
      assert.equal(res.headers.location, at('/products/303'), spelling);
      assert.equal(res.headers['cache-status'], undefined, spelling);
    }
    // What the page may read (matrix parameters, a query string the route does not declare) is
    // rendered, not served from the entry; a path the router reads apart is another route's.
    const others = [
      ['/products/303;x=1', 200],
      ['/products/303?utm_source=x', 200],
      ['/Products/303', 404],
      ['/products/./303', 400],
    ];
    for (const [spelling, status] of others) {
      const res = await request(origin.url, at(spelling));
      assert.equal(res.status, status, spelling);
      assert.doesNotMatch(res.headers['cache-status'] ?? '', /hit|collapsed/, spelling);
    }
  });

  it('shares a page with any generated request whose path is plain and canonical, whatever it carries, and with no other', async () => {
    await assertCacheIsolation({
      ids: ['404', '405', '406'],
      shared: /hit|collapsed|stored/,
      numRuns: 120,
      send: (_, path, headers) => request(origin.url, at(path), { headers }),
    });
  });

  it('renders once for concurrent misses of one page, and a waiter that leaves costs nothing', async () => {
    const tight = await startOrigin({
      env: { MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '1000' },
    });
    try {
      // Uncached 404 renders hold the only slot, so the product requests all arrive while its render waits.
      const blockers = Array.from({ length: 20 }, (_, i) =>
        request(tight.url, at(`/blocked-${i}`)),
      );
      await sleep(20);
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => request(tight.url, at('/products/424242'))),
      );
      await Promise.all(blockers);
      const statuses = answers.map((res) => res.headers['cache-status']);
      const count = (pattern) => statuses.filter((s) => pattern.test(s)).length;
      // Exactly one render: one answer stored it, the others waited for it (or, if one arrived
      // after it ended on a busy machine, were answered from the cache).
      assert.equal(count(/^render-cache; fwd=uri-miss; stored$/), 1, statuses.join('\n'));
      assert.equal(
        count(/^render-cache; (fwd=uri-miss; collapsed|hit; ttl=\d+)$/),
        29,
        statuses.join('\n'),
      );
      assert.ok(count(/collapsed/) >= 20, statuses.join('\n'));
      assert.equal(
        new Set(answers.map((res) => res.text)).size,
        1,
        'every waiter got the one render',
      );
      assert.equal((await health(tight)).renderCache.coalescedWaits, count(/collapsed/));

      // Ten requests for a page wait behind the blockers, and all leave: its render never runs.
      const moreBlockers = Array.from({ length: 20 }, (_, i) =>
        request(tight.url, at(`/blocked-again-${i}`)),
      );
      await sleep(20);
      const sockets = await Promise.all(
        Array.from({ length: 10 }, () =>
          rawRequest(
            tight.port,
            `GET ${at('/products/515151')} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
            {
              afterWrite: (socket) => setTimeout(() => socket.destroy(), 30),
            },
          ),
        ),
      );
      assert.equal(sockets.length, 10);
      await Promise.all(moreBlockers);
      await idle(tight);
      const after = await request(tight.url, at('/products/515151'));
      assert.equal(
        after.headers['cache-status'],
        'render-cache; fwd=uri-miss; stored',
        'the abandoned render never ran: nothing was stored',
      );
    } finally {
      await tight.stop();
    }
  });

  /** Room for about four pages: what one stored page of this app counts, measured. */
  async function fourPages(id) {
    const stored = (await health(origin)).renderCache.bytes;
    assert.match(
      (await request(origin.url, at(`/products/${id}`))).headers['cache-status'],
      /stored/,
    );
    const pageBytes = (await health(origin)).renderCache.bytes - stored;
    assert.ok(pageBytes > 1024, `${pageBytes} bytes a page`);
    return 4 * pageBytes;
  }

  it('stays within RENDER_CACHE_BYTES, least recently used out first (RENDER_CACHE_ADMISSION=first)', async () => {
    const maxBytes = await fourPages(17);
    const small = await startOrigin({
      env: { RENDER_CACHE_BYTES: String(maxBytes), RENDER_CACHE_ADMISSION: 'first' },
    });
    try {
      for (let id = 1; id <= 30; id++) {
        await request(small.url, at(`/products/${id}`));
        const { renderCache } = await health(small);
        assert.ok(renderCache.bytes <= maxBytes, `${renderCache.bytes} bytes`);
      }
      const { renderCache } = await health(small);
      // Four, or three when the last pages are a few bytes longer than the one measured.
      assert.ok(
        renderCache.entries >= 3 && renderCache.entries <= 4,
        `${renderCache.entries} entries`,
      );
      assert.match((await request(small.url, at('/products/30'))).headers['cache-status'], /hit/);
      assert.match(
        (await request(small.url, at('/products/1'))).headers['cache-status'],
        /uri-miss/,
      );
    } finally {
      await small.stop();
    }
  });

  it('keeps its pages through a scan once full, and stores a page asked for again (the default)', async () => {
    const maxBytes = await fourPages(18);
    const small = await startOrigin({ env: { RENDER_CACHE_BYTES: String(maxBytes) } });
    try {
      const statuses = [];
      for (let id = 1; id <= 30; id++) {
        statuses.push((await request(small.url, at(`/products/${id}`))).headers['cache-status']);
      }
      const { renderCache } = await health(small);
      assert.ok(renderCache.bytes <= maxBytes, `${renderCache.bytes} bytes`);
      const held = renderCache.entries;
      assert.ok(held >= 3 && held <= 4, `${held} entries`);
      assert.equal(renderCache.deferred, 30 - held);
      // The pages stored while there was room, and no other: the scan evicted none of them.
      const storedIds = statuses.flatMap((status, i) => (/; stored/.test(status) ? [i + 1] : []));
      assert.equal(storedIds.length, held, statuses.join(' / '));
      for (const id of storedIds) {
        assert.match(
          (await request(small.url, at(`/products/${id}`))).headers['cache-status'],
          /hit/,
        );
      }
      // A deferred page asked for a second time: stored now, the least recently used page out.
      const again = `/products/${statuses.findLastIndex((status) => !/; stored/.test(status)) + 1}`;
      assert.match(
        (await request(small.url, at(again))).headers['cache-status'],
        /uri-miss; stored/,
      );
      assert.match((await request(small.url, at(again))).headers['cache-status'], /hit/);
      const { renderCache: after } = await health(small);
      assert.ok(after.entries >= held - 1 && after.bytes <= maxBytes, JSON.stringify(after));
    } finally {
      await small.stop();
    }
  });

  it('is off with RENDER_CACHE_BYTES=0: every page is rendered and says nothing of a cache', async () => {
    const off = await startOrigin({ env: { RENDER_CACHE_BYTES: '0' } });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await request(off.url, at('/products/7'));
        assert.equal(res.status, 200);
        assert.equal(res.headers['cache-status'], undefined);
      }
      assert.equal((await health(off)).renderCache, undefined);
    } finally {
      await off.stop();
    }
  });

  it('empties on SIGHUP and keeps serving', async () => {
    await request(origin.url, at('/products/909'));
    assert.ok((await health(origin)).renderCache.entries > 0);
    process.kill(origin.pid, 'SIGHUP');
    await waitFor(async () => (await health(origin)).renderCache.entries === 0, {
      what: 'empty render cache after SIGHUP',
      timeoutMs: 2_000,
    });
    assert.equal((await health(origin)).renderCache.entries, 0);
    assert.ok(logLines(origin).some((line) => line.msg === 'SIGHUP: render cache emptied'));
    assert.equal(
      (await request(origin.url, at('/products/909'))).headers['cache-status'],
      'render-cache; fwd=uri-miss; stored',
    );
  });
});

describe('render cache: freshness with a clock the test moves', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({
      nodeArgs: ['--import', join(ROOT, 'test/fixtures/clock.mjs')],
      env: { CLOCK_STEP_MS: '61000' },
    });
  });
  after(() => origin?.stop());

  /** Moves the origin's clock 61 s forward, `times` times, and waits until it says so. */
  async function advance(times = 1) {
    for (let i = 0; i < times; i++) {
      await signalFixture(origin, 'SIGUSR2', 'clock +');
    }
  }

  it('serves stale within stale-while-revalidate while one background render refreshes it', async () => {
    const first = await request(origin.url, at('/products/31'));
    assert.equal(first.headers['cache-status'], 'render-cache; fwd=uri-miss; stored');
    await advance();
    const stale = await request(origin.url, at('/products/31'));
    assert.equal(stale.headers['cache-status'], 'render-cache; hit; ttl=-1');
    assert.equal(stale.headers.age, '61');
    assert.deepEqual(stale.body, first.body);
    await idle(origin);
    const { renderCache } = await health(origin);
    assert.equal(renderCache.staleServed, 1);
    assert.equal(renderCache.refreshes, 1);
    const refreshed = await request(origin.url, at('/products/31'));
    assert.equal(refreshed.headers['cache-status'], 'render-cache; hit; ttl=60');
    assert.equal(refreshed.headers.age, '0');
  });

  it('renders again in the foreground once stale-while-revalidate is over', async () => {
    await request(origin.url, at('/products/32'));
    await advance(11); // 671 s: past 60 s fresh + 600 s stale-while-revalidate
    const expired = await request(origin.url, at('/products/32'));
    assert.equal(expired.headers['cache-status'], 'render-cache; fwd=stale; stored');
    assert.equal(expired.headers.age, undefined);
    const hit = await request(origin.url, at('/products/32'));
    assert.equal(
      hit.headers['cache-status'],
      `render-cache; hit; ttl=${60 - Number(hit.headers.age)}`,
    );
  });

  it('stays healthy: no error logged', async () => {
    assert.deepEqual(
      logLines(origin).filter((line) => line.level >= 50),
      [],
    );
  });
});

describe('render cache: stale-if-error, with renders that time out on demand', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({
      nodeArgs: [
        '--import',
        join(ROOT, 'test/fixtures/clock.mjs'),
        '--import',
        join(ROOT, 'test/fixtures/slow-renders.mjs'),
      ],
      // One step: past s-maxage (60 s) + stale-while-revalidate (600 s), within stale-if-error (86,400 s).
      env: { CLOCK_STEP_MS: '700000', RENDER_TIMEOUT_MS: '1500' },
    });
  });
  after(() => origin?.stop());

  /** Sends `signal` to the origin and waits for the line its fixture prints in answer. */
  async function signal(name, line, times = 1) {
    for (let i = 0; i < times; i++) {
      await signalFixture(origin, name, line, { timeoutMs: 1_000, everyMs: 5 });
    }
  }

  it('answers the stale page when its render times out, until stale-if-error is over', async () => {
    const first = await request(origin.url, at('/products/41'));
    assert.equal(first.headers['cache-status'], 'render-cache; fwd=uri-miss; stored');
    await signal('SIGUSR2', 'clock +'); // 700 s old
    await signal('SIGWINCH', 'slow renders on');

    const stale = await request(origin.url, at('/products/41'));
    assert.equal(stale.status, 200);
    assert.equal(
      stale.headers['cache-status'],
      'render-cache; fwd=stale; fwd-status=504; ttl=-640',
    );
    assert.equal(stale.headers.age, '700');
    assert.equal(stale.headers.etag, first.headers.etag);
    assert.deepEqual(stale.body, first.body);
    // A page never stored has nothing to fall back on: the timed-out render gets the client shell.
    const uncached = await request(origin.url, at('/products/42'));
    assert.equal(uncached.headers['cache-control'], 'no-store');
    assert.equal(uncached.headers['cache-status'], undefined);

    await signal('SIGUSR2', 'clock +', 124); // 87,500 s old: past stale-if-error
    const expired = await request(origin.url, at('/products/41'));
    assert.equal(expired.status, 200);
    assert.equal(
      expired.headers['cache-control'],
      'no-store',
      'the client shell, not the old page',
    );
    assert.notDeepEqual(expired.body, first.body);

    // Renders are quick again. (The timed-out render of /products/41 still runs, and a request for
    // it would wait for that one render, as concurrent misses do.)
    await signal('SIGWINCH', 'slow renders off');
    const rendered = await request(origin.url, at('/products/43'));
    assert.equal(rendered.headers['cache-status'], 'render-cache; fwd=uri-miss; stored');
    assert.match(rendered.text, /<h1>/);
    const { renderCache } = await health(origin);
    assert.equal(renderCache.staleOnError, 1, JSON.stringify(renderCache));
  });
});
