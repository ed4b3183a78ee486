// The render cache's shared tier over real HTTP, with a real redis-server and several origin
// processes on the tests' build: what one renders the others serve, one render per page across
// processes, builds apart, and Redis failing is never the origin failing.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@redis/client';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { listenOnFreePort } from '../../scripts/lib/ports.mjs';
import { assertCacheIsolation } from '../helpers/cache-isolation.mjs';
import {
  DIST,
  ROOT,
  onceForBothEngines,
  siteDirs,
  at,
  health,
  request,
  signalFixture,
  startOrigin,
  workersListening,
} from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

/** Every process behind one load balancer sees the same Host: their cache keys agree. */
const HOST = { host: 'localhost:4000' };

const get = (origin, path, headers = {}) =>
  request(origin.url, at(path), { headers: { ...HOST, ...headers } });

async function rendersStarted(origins) {
  let total = 0;
  for (const origin of origins) {
    total += (await health(origin)).renders.started;
  }
  return total;
}

/** Waits (up to `ms`) until every origin reports the shared tier in `state`. */
async function sharedState(origins, state, ms = 15_000) {
  let states;
  await waitFor(
    async () => {
      states = await Promise.all(origins.map(async (o) => (await health(o)).sharedCache.state));
      return states.every((s) => s === state);
    },
    {
      what: `shared tier ${state} in every origin`,
      timeoutMs: ms,
      everyMs: 100,
      seen: () => `their states: ${states.join(', ')}`,
    },
  );
}

/**
 * A TCP proxy in front of Redis for one process that can hold back its next command naming
 * `marker` (and everything after it on that connection) until the test lets it go: the
 * interleavings between processes a test needs, with Redis and the origins as they are.
 */
async function redisGate(redisUrl) {
  const proxied = new URL(redisUrl);
  const { hostname, port } = proxied;
  let gate;
  const server = createTcpServer((client) => {
    const upstream = connect(Number(port), hostname);
    let held;
    client.on('data', (chunk) => {
      if (held === undefined && gate?.marker !== undefined && chunk.includes(gate.marker)) {
        const { released } = gate;
        gate.marker = undefined;
        held = [];
        released.then(() => {
          upstream.write(Buffer.concat(held));
          held = undefined;
        });
        gate.caught();
      }
      if (held === undefined) {
        upstream.write(chunk);
      } else {
        held.push(chunk);
      }
    });
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  proxied.port = String(await listenOnFreePort(server));
  return {
    url: proxied.href,
    /** Holds the next command naming `marker`: `caught` resolves once it is held. */
    hold(marker) {
      const { promise: caught, resolve: onCaught } = Promise.withResolvers();
      const { promise: released, resolve: release } = Promise.withResolvers();
      gate = { marker, caught: onCaught, released };
      return { caught, release };
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Runs `use` with one more origin on the shared Redis, reaching it through a redisGate. */
async function withGatedOrigin(redisUrl, use) {
  const gate = await redisGate(redisUrl);
  // A generous timeout: a command held at the gate must not count as Redis failing.
  const origin = await startOrigin({ env: { REDIS_URL: gate.url, REDIS_TIMEOUT_MS: '10000' } });
  try {
    await sharedState([origin], 'ready');
    await use(origin, gate);
  } finally {
    await origin.stop();
    await gate.close();
  }
}

/** The page without the per-render server context id (the same page either way). */
const pageOf = (res) => res.text.replace(/ng-server-context="[^"]*"/, '');

describe('shared tier: one cache for every process', () => {
  let redis;
  let origins = [];
  before(async () => {
    redis = await startRedis();
    // A generous REDIS_TIMEOUT_MS: these tests count renders, and on a busy 2-core machine Redis
    // itself may wait for a CPU past 50 ms (the bound is tested below, with Redis paused). The
    // other tests that expect a shared-tier outcome other than a timeout set it as well: npm test
    // runs other suites (builds, Chromium) beside this one.
    origins = await Promise.all(
      [1, 2, 3].map(() => startOrigin({ env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000' } })),
    );
    await sharedState(origins, 'ready');
  });
  after(async () => {
    await Promise.all(origins.map((o) => o.stop()));
    await redis?.close();
  });

  it('serves on one process what another rendered: same page, same ETag, its Age', async () => {
    const [a, b] = origins;
    const before = await rendersStarted(origins);
    const first = await get(a, '/products/501');
    assert.equal(first.status, 200);
    assert.equal(
      first.headers['cache-status'],
      'shared-cache; fwd=uri-miss; stored, render-cache; fwd=uri-miss; stored',
    );
    const second = await get(b, '/products/501');
    assert.equal(second.status, 200);
    assert.match(
      second.headers['cache-status'],
      /^shared-cache; hit; ttl=\d+, render-cache; fwd=uri-miss; stored$/,
    );
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(second.headers['cache-control'], first.headers['cache-control']);
    assert.match(second.headers.age, /^\d+$/);
    assert.equal(pageOf(second), pageOf(first));
    // Then from b's own memory, before Koa.
    const third = await get(b, '/products/501');
    assert.match(third.headers['cache-status'], /^render-cache; hit; ttl=\d+$/);
    assert.equal(await rendersStarted(origins), before + 1, 'one render for both processes');
    const stats = (await health(b)).sharedCache;
    assert.equal(stats.state, 'ready');
    assert.ok(stats.hits >= 1, JSON.stringify(stats));
  });

  it('keeps a page’s stored codings in the shared tier: compressed once for every process', async () => {
    const [a, , c] = origins;
    const first = await get(a, '/products/520', { 'accept-encoding': 'br' });
    assert.equal(first.headers['content-encoding'], 'br');
    const before = await rendersStarted(origins);
    for (const coding of ['br', 'gzip']) {
      const made = await get(a, '/products/520', { 'accept-encoding': coding });
      const shared = await get(c, '/products/520', { 'accept-encoding': coding });
      assert.equal(shared.headers['content-encoding'], coding);
      assert.equal(
        shared.headers.etag,
        made.headers.etag,
        `${coding}: the same bytes, the same tag`,
      );
      assert.ok(shared.body.equals(made.body), coding);
      assert.equal(shared.headers.vary, 'Accept-Encoding');
    }
    const plain = await get(c, '/products/520');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.notEqual(plain.headers.etag, first.headers.etag);
    assert.equal(await rendersStarted(origins), before, 'nothing rendered again');
  });

  it('renders once for 100 concurrent first requests spread over 3 processes', async (t) => {
    const before = await rendersStarted(origins);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => get(origins[i % 3], '/products/502')),
    );
    assert.deepEqual(new Set(answers.map((res) => res.status)), new Set([200]));
    assert.equal(new Set(answers.map(pageOf)).size, 1, 'every request got the same page');
    const renders = (await rendersStarted(origins)) - before;
    t.diagnostic(`100 concurrent first requests over 3 processes: ${renders} render(s)`);
    assert.equal(renders, 1, 'exactly one render');
  });

  it('makes a process wait while another holds the render lock, then serves the page it stored', async () => {
    // The holder's store waits at the gate, so the other process must find the lock taken.
    await withGatedOrigin(redis.url, async (holder, gate) => {
      const all = [...origins, holder];
      const before = await rendersStarted(all);
      const lockWaits = async () => (await health(origins[1])).sharedCache.lockWaits;
      const waitsBefore = await lockWaits();
      const held = gate.hold('HSET');
      const first = get(holder, '/products/509');
      await held.caught;
      const waiting = get(origins[1], '/products/509');
      await waitFor(async () => (await lockWaits()) > waitsBefore, {
        what: 'lock wait of the other process (it found the lock taken)',
        timeoutMs: 5_000,
        everyMs: 50,
      });
      held.release();
      const [rendered, waited] = await Promise.all([first, waiting]);
      assert.equal(waited.status, 200);
      assert.match(
        waited.headers['cache-status'],
        /^shared-cache; hit; ttl=\d+; collapsed, render-cache; fwd=uri-miss; stored$/,
      );
      assert.equal(pageOf(waited), pageOf(rendered));
      assert.equal((await rendersStarted(all)) - before, 1, 'one render for both processes');
    });
  });

  it('renders once when another process stores the page between its lookup and its lock', async () => {
    // The race behind a rare second render in the 100-request test, made certain: the late
    // process's lock request waits at the gate while another renders, stores and lets go of the lock.
    await withGatedOrigin(redis.url, async (late, gate) => {
      const all = [...origins, late];
      const before = await rendersStarted(all);
      const held = gate.hold(':lock:');
      const lateAnswer = get(late, '/products/508');
      await held.caught;
      const first = await get(origins[0], '/products/508');
      assert.match(first.headers['cache-status'], /^shared-cache; fwd=uri-miss; stored/);
      held.release();
      const res = await lateAnswer;
      assert.equal(res.status, 200);
      assert.match(
        res.headers['cache-status'],
        /^shared-cache; hit; ttl=\d+, render-cache; fwd=uri-miss; stored$/,
      );
      assert.equal(pageOf(res), pageOf(first));
      assert.equal((await rendersStarted(all)) - before, 1, 'one render for both processes');
    });
  });

  it('keeps pages over SHARED_CACHE_MAX_ENTRY_BYTES in their process only', async () => {
    const small = await startOrigin({
      env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000', SHARED_CACHE_MAX_ENTRY_BYTES: '1000' },
    });
    try {
      await sharedState([small], 'ready');
      const res = await get(small, '/products/503');
      assert.equal(
        res.headers['cache-status'],
        'shared-cache; fwd=uri-miss; detail=too-large, render-cache; fwd=uri-miss; stored',
      );
      const other = await get(origins[0], '/products/503');
      assert.match(other.headers['cache-status'], /^shared-cache; fwd=uri-miss; stored/);
      assert.equal((await health(small)).sharedCache.tooLarge, 1);
    } finally {
      await small.stop();
    }
  });

  it('keeps the isolation rules across both tiers: a page for any visitor of a canonical path, none for another spelling', async () => {
    await assertCacheIsolation({
      ids: ['504', '505', '506'],
      origins: 3,
      shared: /shared-cache|hit|collapsed|stored/,
      numRuns: 90,
      send: (which, path, headers) => get(origins[which], path, headers),
    });
  });

  it('never shares a page between hosts', async () => {
    const [a, b] = origins;
    await get(a, '/products/507', { host: 'localhost:4000' });
    const other = await get(b, '/products/507', { host: '127.0.0.1:4000' });
    assert.match(other.headers['cache-status'], /^shared-cache; fwd=uri-miss; stored/);
  });
});

describe('shared tier: revalidation reaches every process of every replica, and the CDN', () => {
  const TOKEN = 'shared-token-0123456789abcdef0123456789abcdef';
  let redis;
  let cdn;
  const purged = [];
  let origins = [];
  before(async () => {
    redis = await startRedis();
    // A stand-in for a CDN's purge API.
    cdn = createServer((req, res) => {
      purged.push({ url: req.url, auth: req.headers.authorization });
      res.end('{}');
    });
    await listenOnFreePort(cdn);
    const env = {
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: '1000',
      REVALIDATE_TOKEN: TOKEN,
      CDN_PURGE_URL: `http://127.0.0.1:${cdn.address().port}/purge/{group}?mode={mode}`,
      CDN_PURGE_TOKEN: 'cdn-secret',
    };
    // Two replicas: one process, and a pod of two cluster workers.
    origins = await Promise.all([
      startOrigin({ env }),
      startOrigin({ env: { ...env, WORKERS: '2' } }),
    ]);
    await sharedState([origins[0]], 'ready');
    await workersListening(origins[1], 2);
    await sleep(500);
  });
  after(async () => {
    await Promise.all(origins.map((o) => o.stop()));
    await redis?.close();
    cdn?.close();
  });

  const revalidate = (origin, body) =>
    request(origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** Requests `path` from the single process and (repeatedly, to reach both) the pod's workers. */
  async function everywhere(path) {
    const answers = [await get(origins[0], path)];
    for (let i = 0; i < 6; i++) {
      answers.push(await get(origins[1], path));
    }
    return answers;
  }

  /** Renders begun by every process: the pod's workers answer /healthz in turn. */
  async function allRenders() {
    const single = (await health(origins[0])).renders.started;
    const workers = new Map();
    for (let i = 0; i < 40 && workers.size < 2; i++) {
      const answer = await health(origins[1]);
      workers.set(answer.worker, answer.renders.started);
    }
    assert.equal(workers.size, 2, 'both workers answered');
    return single + [...workers.values()].reduce((a, b) => a + b, 0);
  }

  /** Polls every process until each has applied one more revalidation than before, for up to 1 s. */
  async function heardWithin1s(before) {
    let now;
    await waitFor(
      async () => {
        now = await receivedCounts();
        return [...now].every(([who, count]) => count > (before.get(who) ?? 0));
      },
      {
        what: 'revalidation heard by every process',
        timeoutMs: 1000,
        seen: () => `counts: ${JSON.stringify([...now])}`,
      },
    );
  }

  async function receivedCounts() {
    // The process asked counts it as requested; the others, as received.
    const seen = ({ revalidations }) => revalidations.requested + revalidations.received;
    const counts = new Map([['single', seen(await health(origins[0]))]]);
    for (let i = 0; i < 40 && counts.size < 3; i++) {
      const answer = await health(origins[1]);
      counts.set(`worker-${answer.worker}`, seen(answer));
    }
    return counts;
  }

  it('soft, by group: every process serves the stale page at once, one render refreshes it for all', async () => {
    await everywhere('/products/611');
    const before = await receivedCounts();
    const rendersBefore = await allRenders();
    const res = await revalidate(origins[0], { groups: ['product-611'], mode: 'soft' });
    assert.equal(res.status, 200, res.text);
    const report = JSON.parse(res.text);
    const redisChannel = report.channels.find((channel) => channel.name === 'redis');
    assert.equal(redisChannel.ok, true, JSON.stringify(report));
    assert.equal(redisChannel.sharedPages, 1, 'the page in Redis was marked');
    assert.deepEqual(report.cdn.ok, true, JSON.stringify(report.cdn));
    assert.ok(
      purged.some(
        (call) => call.url === '/purge/product-611?mode=soft' && call.auth === 'Bearer cdn-secret',
      ),
    );
    await heardWithin1s(before);
    // Each process answers with the page it had, marked stale, and refreshes it in the background.
    const answers = await everywhere('/products/611');
    assert.ok(answers.every((answer) => answer.status === 200));
    assert.match(answers[0].headers['cache-status'], /detail=revalidated/);
    // Then fresh everywhere, after exactly one render for all three processes.
    await waitFor(
      async () =>
        (await everywhere('/products/611')).every((answer) =>
          /^render-cache; hit; ttl=\d+$/.test(answer.headers['cache-status']),
        ),
      { what: 'refreshed page in every process', timeoutMs: 5_000, everyMs: 50 },
    );
    assert.equal(await allRenders(), rendersBefore + 1, 'one refresh render for every replica');
  });

  it('hard, by path: the page is gone everywhere, and the next request renders it once', async () => {
    await everywhere('/products/612');
    const before = await receivedCounts();
    const rendersBefore = await allRenders();
    const res = await revalidate(origins[1], { paths: [at('/products/612')], mode: 'hard' });
    assert.equal(res.status, 200, res.text);
    await heardWithin1s(before);
    const first = await get(origins[0], '/products/612');
    assert.equal(
      first.headers['cache-status'],
      'shared-cache; fwd=uri-miss; stored, render-cache; fwd=uri-miss; stored',
    );
    const others = await everywhere('/products/612');
    for (const answer of others) {
      assert.match(answer.headers['cache-status'], /^(shared-cache; hit|render-cache; hit)/);
    }
    assert.equal(await allRenders(), rendersBefore + 1, 'rendered once, served to all from Redis');
  });
});

describe('shared tier: a process whose own cache cannot keep the page', () => {
  it('answers a request that arrives while the stale shared page is refreshed with the refreshed page', async () => {
    const redis = await startRedis();
    // RENDER_CACHE_BYTES=1: the page lives in Redis only, so a request during the background
    // refresh finds nothing here and joins that refresh.
    const origin = await startOrigin({
      nodeArgs: ['--import', join(ROOT, 'test/fixtures/clock.mjs')],
      env: {
        REDIS_URL: redis.url,
        REDIS_TIMEOUT_MS: '1000',
        RENDER_CACHE_BYTES: '1',
        CLOCK_STEP_MS: '61000',
      },
    });
    try {
      await sharedState([origin], 'ready');
      await get(origin, '/products/950');
      await signalFixture(origin, 'SIGUSR2', 'clock +');
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => get(origin, '/products/950')),
      );
      assert.deepEqual(
        answers.map((res) => res.status),
        Array(8).fill(200),
        answers.map((res) => res.headers['cache-status']).join(' | '),
      );
      assert.match(answers[0].headers['cache-status'], /^shared-cache; hit; ttl=-/);
    } finally {
      await origin.stop();
      await redis.close();
    }
  });
});

describe('shared tier: with a Content-Security-Policy', () => {
  it('serves a page another process rendered with a nonce of its own on every tag', async () => {
    const redis = await startRedis();
    const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000', CSP: 'strict' };
    const [a, b] = await Promise.all([startOrigin({ env }), startOrigin({ env })]);
    try {
      await sharedState([a, b], 'ready');
      const first = await get(a, '/products/901');
      const second = await get(b, '/products/901');
      assert.match(second.headers['cache-status'], /^shared-cache; hit/);
      for (const res of [first, second]) {
        const nonce = /'nonce-([^']+)'/.exec(res.headers['content-security-policy'])?.[1];
        assert.ok(nonce, res.headers['content-security-policy']);
        const nonces = [...res.text.matchAll(/\snonce="([^"]*)"/g)].map((m) => m[1]);
        assert.ok(nonces.length > 0);
        assert.deepEqual(new Set(nonces), new Set([nonce]), 'every tag carries the header nonce');
      }
      assert.equal(second.headers.etag, first.headers.etag, 'the weak validator is the same');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await redis.close();
    }
  });
});

describe('shared tier: builds never share', () => {
  let redis;
  let copy;
  before(async () => {
    redis = await startRedis();
    // Another build of the same app: the server resolves its packages from the repository's
    // node_modules, so the copy lives under it. One changed byte in the client shell is a new build.
    copy = mkdtempSync(join(ROOT, 'node_modules/.cache-origin-build-'));
    cpSync(DIST, copy, { recursive: true });
    const shell = join(siteDirs(copy).browser, 'index.csr.html');
    writeFileSync(shell, `${readFileSync(shell, 'utf8')}<!-- next build -->\n`);
  });
  after(async () => {
    await redis?.close();
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('a page of one build is a miss for the next, then both are served side by side', async () => {
    const started = [];
    const start = async (options) => {
      const origin = await startOrigin(options);
      started.push(origin);
      return origin;
    };
    try {
      const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000' };
      const old = await start({ env });
      const next = await start({ env, dist: copy });
      await sharedState([old, next], 'ready');
      await get(old, '/products/601');
      const res = await get(next, '/products/601');
      assert.match(res.headers['cache-status'], /^shared-cache; fwd=uri-miss; stored/);
      const keys = await redisKeys(redis.url, '*:entry:*products/601');
      assert.equal(keys.length, 2, `one entry per build: ${keys.join(', ')}`);
      const builds = new Set(keys.map((key) => /\{([^}]+)\}/.exec(key)?.[1]));
      assert.equal(builds.size, 2);
    } finally {
      await Promise.all(started.map((origin) => origin.stop()));
    }
  });
});

describe(
  'shared tier: Redis failing is not the origin failing',
  onceForBothEngines('the same tier whatever renders'),
  () => {
    let redis;
    let origins = [];
    before(async () => {
      redis = await startRedis();
      origins = await Promise.all(
        [1, 2].map(() => startOrigin({ env: { REDIS_URL: redis.url, RENDER_CACHE_BYTES: '1' } })),
      );
      await sharedState(origins, 'ready');
    });
    after(async () => {
      await Promise.all(origins.map((o) => o.stop()));
      await redis?.close();
    });

    it('answers every request while Redis is killed under load, says so, and shares again once it is back', async (t) => {
      // RENDER_CACHE_BYTES=1: nothing fits in a process's own cache, so every answer involves Redis.
      const statuses = [];
      const cacheStatuses = new Set();
      let stop = false;
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const res = await get(origins[i % 2], `/products/${700 + (i % 5)}`);
          statuses.push(res.status);
          cacheStatuses.add(/^shared-cache; [^,]*/.exec(res.headers['cache-status'] ?? '')?.[0]);
        }
      })();
      await sleep(1000);
      await redis.stop();
      await sleep(2000);
      const whileDown = await get(origins[0], '/products/710');
      assert.equal(whileDown.status, 200);
      assert.match(
        whileDown.headers['cache-status'],
        /^shared-cache; fwd=bypass; detail=(down|error|circuit-open|timeout), render-cache/,
      );
      const healthDown = await health(origins[0]);
      assert.notEqual(healthDown.sharedCache.state, 'ready');
      assert.equal((await request(origins[0].url, '/readyz')).status, 200, 'still ready');
      await redis.start();
      await sharedState(origins, 'ready', 10_000);
      stop = true;
      await load;
      t.diagnostic(
        `${statuses.length} requests while Redis was killed and restarted, ` +
          `${statuses.filter((status) => status !== 200).length} not 200; shared tier said: ` +
          [...cacheStatuses].filter(Boolean).join(' | '),
      );
      assert.ok(statuses.length > 20, `${statuses.length} requests`);
      assert.deepEqual(
        statuses.filter((status) => status !== 200),
        [],
        'no request failed while Redis was down',
      );
      assert.ok(
        [...cacheStatuses].some((status) =>
          /detail=(down|error|circuit-open|timeout)/.test(status),
        ),
        [...cacheStatuses].join(' | '),
      );
      // Shared hits resume: a page rendered on one is served by the other again.
      await get(origins[0], '/products/720');
      const shared = await get(origins[1], '/products/720');
      assert.match(shared.headers['cache-status'], /^shared-cache; hit/);
    });

    it('never waits on a Redis that stops answering: requests go on without it', async () => {
      const admin = createClient({ url: redis.url });
      admin.on('error', () => undefined);
      await admin.connect();
      const pausedUntil = Date.now() + 5000;
      // Redis accepts connections but answers nothing for 5 s.
      await admin.sendCommand(['CLIENT', 'PAUSE', '5000', 'ALL']);
      try {
        for (let i = 0; i < 6; i++) {
          const res = await get(origins[i % 2], `/products/${730 + i}`);
          assert.equal(res.status, 200);
          assert.match(
            res.headers['cache-status'],
            /^shared-cache; fwd=bypass; detail=(timeout|circuit-open), render-cache/,
          );
        }
        // Six answers with Redis silent, each bounded by REDIS_TIMEOUT_MS (50 ms) rather than the pause.
        assert.ok(Date.now() < pausedUntil, 'every answer came while Redis was still paused');
        const { skipped } = (await health(origins[0])).sharedCache;
        assert.ok(skipped.timeout >= 1, JSON.stringify(skipped));
      } finally {
        await admin.sendCommand(['CLIENT', 'UNPAUSE']);
        admin.destroy();
      }
    });
  },
);

describe('shared tier: AUTH', () => {
  it('connects with the password in REDIS_URL, and serves (without it) when the password is wrong', async () => {
    const redis = await startRedis({ password: 's3cret/pass' });
    const good = await startOrigin({ env: { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '1000' } });
    const bad = await startOrigin({
      env: { REDIS_URL: redis.url.replace('s3cret%2Fpass', 'wrong') },
    });
    try {
      await sharedState([good], 'ready');
      const res = await get(good, '/products/801');
      assert.match(res.headers['cache-status'], /^shared-cache; fwd=uri-miss; stored/);
      const refused = await get(bad, '/products/802');
      assert.equal(refused.status, 200);
      assert.match(refused.headers['cache-status'], /^shared-cache; fwd=bypass/);
      assert.doesNotMatch(bad.stdout() + bad.stderr(), /s3cret|wrong@/, 'no password in the log');
    } finally {
      await Promise.all([good.stop(), bad.stop()]);
      await redis.close();
    }
  });
});

async function redisKeys(url, pattern) {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.keys(pattern);
  } finally {
    client.destroy();
  }
}
