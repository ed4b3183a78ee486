// A rolling deploy behind the shipped Varnish (deploy/varnish/default.vcl) drops nothing. Real
// origins (the tests' app) on loopback behind a real varnishd, three backend ports with two origins
// serving: a new origin on the free port, in once Varnish's probe sees it, then SIGTERM to the oldest,
// under load that reaches the origins (pages rendered per visitor, POSTs, uncached files). The
// origins keep their default drain window (DRAIN_WINDOW_MS), which the shipped probe fits in. Then
// what the VCL's retry covers (a refusal the probe did not see yet), what it cannot (a POST, an answer
// cut short), and a purge sent to an origin while it drains.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { rollingDeploy, startReplicas } from '../../scripts/lib/rolling-deploy.mjs';
import { inputsVclOf } from '../../scripts/lib/varnish.mjs';
import { DIST, ROOT, rawRequest, request } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const TOKEN = 'rolling-deploy-token-0123456789abcdef';
/** The origin's own default window: the helpers start origins without one. */
const DEFAULT_WINDOW = { DRAIN_WINDOW_MS: '' };

describe('a rolling deploy behind Varnish (deploy/varnish/default.vcl)', () => {
  let inputsVcl;
  before(async () => {
    inputsVcl = await inputsVclOf(DIST);
  });

  for (const workers of [1, 2]) {
    it(`replaces an origin (WORKERS=${workers}) three times under load: not one request fails`, async (t) => {
      const fleet = await startReplicas({
        dist: DIST,
        inputsVcl,
        env: { ...DEFAULT_WINDOW, WORKERS: String(workers) },
      });
      try {
        const load = await rollingDeploy(fleet, { replacements: 3, tag: `workers-${workers}` });
        t.diagnostic(
          `${load.answered} requests answered during 3 replacements; statuses ${JSON.stringify(load.statuses)}, ${load.errors} errors, ${load.timeouts} timeouts`,
        );
        assert.deepEqual(load.exits, [0, 0, 0], 'every replaced origin drained and exited 0');
        assert.deepEqual(
          { failed: load.failed, errors: load.errors, timeouts: load.timeouts },
          { failed: 0, errors: 0, timeouts: 0 },
          JSON.stringify(load.statuses),
        );
        assert.ok(load.answered >= 2000, `only ${load.answered} requests: too little load`);
        // The director spread the load: every backend port served its share in turn.
        for (const backend of ['origin_1', 'origin_2', 'origin_3']) {
          const requests = await fleet.varnish.counter(`VBE.boot.${backend}.req`);
          assert.ok(requests > 100, `${backend}: ${requests} requests`);
        }
      } finally {
        await fleet.stop();
      }
    });
  }

  it('retries a GET that a replica refused before the probe saw it, on another replica; never a POST', async () => {
    const fleet = await startReplicas({ dist: DIST, inputsVcl, slots: 2, replicas: 1 });
    try {
      // Nothing listens on origin_2's port, yet Varnish is told it is healthy: the moment after a
      // replica stopped accepting, before its probe failed.
      await fleet.varnish.admin('backend.set_health', 'origin_2', 'healthy');
      assert.equal((await fleet.varnish.health()).origin_2, true);
      const paths = Array.from({ length: 20 }, (_, i) => `/favicon.ico?n=${i}`);
      const ask = (method) =>
        Promise.all(
          paths.map(async (path) => (await request(fleet.varnish.url, path, { method })).status),
        );
      assert.deepEqual(await ask('GET'), Array(20).fill(200));
      // The same URLs go to the same replica first (the director keys by URL). As POSTs, never
      // retried: those sent to the refusing replica fail, the others reach the origin, which takes no
      // POST for a file. So each 503 is a GET above that was refused, then answered by the other.
      const posts = await ask('POST');
      const refused = posts.filter((status) => status === 503).length;
      assert.deepEqual(
        posts.filter((status) => status !== 503 && status !== 405),
        [],
        'a POST was answered by neither',
      );
      assert.ok(refused > 0, 'no URL goes to the refusing replica: the test proves nothing');
      assert.ok(refused < 20, 'every URL goes to the refusing replica: the director is not used');
    } finally {
      await fleet.stop();
    }
  });

  it('lets the draining origin answer a purge during its window, which reaches Varnish', async () => {
    const fleet = await startReplicas({
      dist: DIST,
      inputsVcl,
      env: (varnishUrl) => ({
        ...DEFAULT_WINDOW,
        REVALIDATE_TOKEN: TOKEN,
        CACHE_GROUP_ALIASES: 'xkey',
        CDN_PURGE_URL: `${varnishUrl}/.origin/purge/{mode}/{groups}`,
        CDN_PURGE_METHOD: 'PURGE',
      }),
    });
    const cache = async () => (await request(fleet.varnish.url, '/products/42')).headers['x-cache'];
    try {
      await cache();
      assert.equal(await cache(), 'hit');
      let purge;
      const code = await fleet.replace(async ({ origin }) => {
        await waitFor(async () => (await request(origin.url, '/readyz')).status === 503, {
          what: "503 from the stopping origin's /readyz",
          timeoutMs: 10_000,
        });
        purge = await request(origin.url, '/_origin/revalidate', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ groups: ['product-42'], mode: 'hard' }),
        });
        assert.ok(
          !origin.stdout().includes('draining: no new connections'),
          'the window ended before the purge: the test proves nothing',
        );
      });
      assert.equal(purge.status, 200, purge.text);
      assert.equal(JSON.parse(purge.text).cdn.ok, true, purge.text);
      assert.equal(await cache(), 'miss', 'purged from Varnish');
      assert.equal(code, 0);
    } finally {
      await fleet.stop();
    }
  });

  it('cannot save an answer cut short: the client gets part of it, and the next requests go to the other replica', async () => {
    const fleet = await startReplicas({
      dist: DIST,
      inputsVcl,
      slots: 2,
      nodeArgs: ['--import', join(ROOT, 'test/fixtures/die-mid-answer.mjs')],
    });
    try {
      const { raw } = await rawRequest(
        fleet.varnish.port,
        'GET /products/7?die-mid-answer HTTP/1.1\r\nHost: localhost\r\n\r\n',
      );
      const [head, ...body] = raw.split('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
      const chunked = /\r\ntransfer-encoding: chunked/i.test(head);
      // Varnish streams the answer as it comes: the headers and what came went out, then the
      // connection closed short of the length (or, chunked, without the last chunk).
      assert.match(head, /^HTTP\/1\.1 200 /);
      if (chunked) assert.doesNotMatch(raw, /\r\n0\r\n\r\n$/);
      else assert.ok(Buffer.byteLength(body.join('\r\n\r\n'), 'latin1') < length, head);
      const code = await Promise.race(fleet.serving.map(({ origin }) => origin.exited));
      assert.equal(code, null, 'the origin that answered was killed');
      // Until the probe sees it gone, fetches sent to it are refused and retried elsewhere.
      const after = await Promise.all(
        Array.from({ length: 20 }, (_, i) => request(fleet.varnish.url, `/favicon.ico?after=${i}`)),
      );
      assert.deepEqual(
        after.map((res) => res.status),
        Array(20).fill(200),
      );
    } finally {
      await fleet.stop();
    }
  });
});
