// deploy/varnish/: the template's CDN configuration, run by a real varnishd in front of a real
// origin (the tests' app, whose `seen/:id` declares a currency cookie and an A/B header, and whose
// product pages declare cache groups). What a CDN does for each kind of request, checked through it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { inputsVcl } from '../../deploy/varnish/inputs.mjs';
import { vclForInputs } from '../../deploy/varnish/inputs-vcl.mjs';
import { freePort } from '../../scripts/lib/ports.mjs';
import { DEFAULT_VCL, startVarnish } from '../../scripts/lib/varnish.mjs';
import { APP_DIST, at, DIST, ROOT, request, startOrigin } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';
import fc from 'fast-check';
import { readConfig } from '../../server/config.ts';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { canariesOf, headersOf, spellingOf, visitor } from '../helpers/visitors.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { serializeCacheGroups } from '../../server/cache/cache-groups.ts';

const TOKEN = 'varnish-test-token-0123456789abcdef';

/** The routes of a build, as the origin reads them (a localized build's first locale's: all have the same). */
async function routesOf(dist) {
  const [{ serverDir }] = (await readBuildDirs(dist)).locales;
  return (await import(pathToFileURL(join(serverDir, 'main.server.mjs')).href)).serverRoutes;
}

describe('deploy/varnish/inputs.vcl', () => {
  it("is what `npm run varnish:inputs` makes of the app's routes: Varnish keys pages as the origin does", async () => {
    assert.equal(
      readFileSync(join(ROOT, 'deploy/varnish/inputs.vcl'), 'utf8'),
      inputsVcl(await routesOf(APP_DIST)),
      'the app declares other render inputs than inputs.vcl: run npm run varnish:inputs',
    );
  });
});

/** varnishd with `inputs` (an inputs.vcl) in front of the tests' origin, once its probe sees it up. */
async function originBehindVarnish(inputs, env = {}) {
  const originPort = await freePort();
  const varnish = await startVarnish({ backendPort: originPort, inputsVcl: inputs });
  const origin = await startOrigin({
    env: {
      PORT: String(originPort),
      CACHE_GROUP_ALIASES: 'xkey',
      CDN_PURGE_URL: `${varnish.url}/.origin/purge/{mode}/{groups}`,
      CDN_PURGE_METHOD: 'PURGE',
      ...env,
    },
  });
  // Varnish fetches from the origin once its health probe (/readyz) has seen it up.
  await waitFor(async () => (await request(varnish.url, '/readyz')).status === 200, {
    what: 'healthy origin as Varnish sees it',
    timeoutMs: 10_000,
    everyMs: 100,
    seen: varnish.output,
  });
  return { origin, varnish };
}

/**
 * The API of test/app's `data/:id` pages: the catalog, and items whose groups (the API's own
 * Cache-Groups, which become the page's `api:` groups) a test sets per item.
 */
async function startTaggingApi() {
  const groups = new Map();
  const api = await serveOnLoopback((req, res) => {
    const id = req.url.split('/').pop();
    const tags = req.url === '/catalog' ? ['catalog'] : (groups.get(id) ?? [`item-${id}`]);
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'public, max-age=60',
      'cache-groups': serializeCacheGroups(tags),
    });
    res.end(JSON.stringify(req.url === '/catalog' ? { name: 'catalog' } : { id, title: id }));
  });
  return { ...api, tag: (id, tags) => groups.set(String(id), tags) };
}

describe("deploy/varnish/default.vcl's probe", () => {
  it("marks a stopping origin sick within the origin's default drain window", () => {
    const probe = /^probe origin_ready \{([^}]*)\}/m.exec(readFileSync(DEFAULT_VCL, 'utf8'))?.[1];
    assert.ok(probe, 'a probe named origin_ready');
    const field = (name) => /\s*(\S+);/.exec(probe.split(`.${name} =`)[1] ?? '')?.[1];
    const ms = (duration) => {
      const [, number, unit] = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(duration ?? '') ?? [];
      assert.ok(number, `a duration in ms or s: ${duration}`);
      return Number(number) * (unit === 's' ? 1000 : 1);
    };
    assert.equal(field('url'), '"/readyz"');
    // Healthy while `threshold` of the last `window` probes were good: from all good, that many
    // failures in a row make it sick, each up to `interval` apart, the first one up to `timeout` long.
    const failures = Number(field('window')) - Number(field('threshold')) + 1;
    const sickWithinMs = failures * ms(field('interval')) + ms(field('timeout'));
    const { drainWindowMs } = readConfig({}).processes;
    assert.ok(
      sickWithinMs <= drainWindowMs,
      `the probe may take ${sickWithinMs} ms to mark an origin sick; DRAIN_WINDOW_MS defaults to ${drainWindowMs}`,
    );
  });
});

describe('Varnish in front of the origin (deploy/varnish/default.vcl)', () => {
  let origin;
  let varnish;
  let api;
  before(async () => {
    api = await startTaggingApi();
    ({ origin, varnish } = await originBehindVarnish(inputsVcl(await routesOf(DIST)), {
      REVALIDATE_TOKEN: TOKEN,
      TEST_DATA_API: api.url,
    }));
  });
  after(async () => {
    await origin?.stop();
    await varnish?.stop();
    await api?.close();
  });

  const get = (path, headers = {}) => request(varnish.url, path, { headers });
  const revalidate = async (body) => {
    const answer = await request(origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 200, answer.text);
    const report = JSON.parse(answer.text);
    assert.equal(report.cdn.ok, true, JSON.stringify(report.cdn));
    return report;
  };
  /** Fetches `path` through Varnish until it is a hit (stored there). */
  const stored = async (path) => {
    await get(path);
    assert.equal((await get(path)).headers['x-cache'], 'hit', `${path} stored in Varnish`);
  };
  const currencyOf = (page) => /<p class="currency">(\w+)<\/p>/.exec(page.text)?.[1];

  it("gives signed-in visitors the cached page of their currency, never another visitor's", async () => {
    const first = await get('/seen/1', { cookie: 'sid=canaryone; _ga=GA1.2.3; currency=USD' });
    assert.equal(first.headers['x-cache'], 'miss');
    const second = await get('/seen/1', {
      cookie: 'currency=USD; sid=canarytwo',
      authorization: 'Bearer canarythree',
    });
    assert.equal(second.headers['x-cache'], 'hit', 'another visitor of the same currency: a hit');
    assert.doesNotMatch(second.text, /canary/);
    assert.equal(currencyOf(second), 'USD');
    assert.equal(second.headers.vary, 'Cookie, x-ab-bucket, Accept-Encoding');
    const pounds = await get('/seen/1', { cookie: 'sid=canaryone; currency=GBP' });
    assert.equal(pounds.headers['x-cache'], 'miss', 'each currency a variant of its own');
    assert.equal(currencyOf(pounds), 'GBP');
    // Anonymous, an unknown currency and no currency are the default's one page.
    const euros = await get('/seen/1');
    assert.equal(currencyOf(euros), 'EUR');
    for (const cookie of ['currency=JPY', 'sid=x', 'currency=']) {
      const page = await get('/seen/1', { cookie });
      assert.equal(page.headers['x-cache'], 'hit', cookie);
      assert.equal(currencyOf(page), 'EUR', cookie);
    }
  });

  it('keys a page by the value it was rendered with, whatever cookie a visitor repeats', async () => {
    for (const cookie of [
      'currency=USD; currency=GBP',
      'currency=GBP; currency=USD',
      'currency=usd; currency=USD',
    ]) {
      const path = `/seen/${2 + cookie.length}`;
      await get(path, { cookie });
      for (const currency of ['USD', 'GBP', 'EUR']) {
        const page = await get(path, { cookie: `currency=${currency}` });
        assert.equal(
          currencyOf(page),
          currency,
          `${cookie} left ${currency}'s page holding another`,
        );
      }
    }
  });

  it("passes private pages: each visitor's own render, never stored", async () => {
    for (const sid of ['canaryalice', 'canarybob', 'canaryalice']) {
      const page = await get('/private-seen', { cookie: `sid=${sid}` });
      assert.equal(page.headers['x-cache'], 'miss');
      assert.match(page.text, new RegExp(sid));
      assert.doesNotMatch(
        page.text,
        new RegExp(`canary(?!${sid.slice(6)})[a-z]+`),
        'another visitor',
      );
    }
  });

  it("purges by the page's cache groups when the origin revalidates: hard drops it, soft serves it once more", async () => {
    await get('/products/42');
    assert.equal((await get('/products/42')).headers['x-cache'], 'hit');
    const revalidate = (mode) =>
      request(origin.url, '/_origin/revalidate', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ groups: ['product-42'], mode }),
      });
    const hard = JSON.parse((await revalidate('hard')).text);
    assert.equal(hard.cdn.ok, true, JSON.stringify(hard.cdn));
    assert.equal((await get('/products/42')).headers['x-cache'], 'miss', 'hard: gone from Varnish');
    assert.equal((await get('/products/42')).headers['x-cache'], 'hit');

    const soft = JSON.parse((await revalidate('soft')).text);
    assert.equal(soft.cdn.ok, true);
    const stale = await get('/products/42');
    assert.equal(
      stale.headers['x-cache'],
      'hit',
      'soft: served stale once more, refreshed meanwhile',
    );
  });

  it('never keeps a page the origin sent stale as fresh: after a soft revalidation the new page follows', async () => {
    const path = '/products/77';
    await get(path);
    await get(path);
    await request(origin.url, '/_origin/revalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: [path], mode: 'soft' }),
    });
    // Varnish still holds its fresh copy until its TTL; a soft purge by path is the origin's
    // alone, so force Varnish's refetch the way a CDN's own expiry would: by group.
    await request(varnish.url, '/.origin/purge/soft/product-77', { method: 'PURGE' });
    const seen = [];
    await waitFor(
      async () => {
        const page = await get(path);
        const status = page.headers['cache-status'];
        seen.push(`${page.headers['x-cache']} age=${page.headers.age} ${status}`);
        if (/detail=revalidated/.test(status)) {
          assert.ok(
            Number(page.headers.age) >= 60,
            `the origin's stale answer kept as fresh: ${seen.join('\n')}`,
          );
          return false;
        }
        return /ttl=(?:[1-9]|60)/.test(status) && seen.length > 1;
      },
      {
        what: 'new page through Varnish',
        timeoutMs: 4_000,
        everyMs: 100,
        seen: () => seen.join('\n'),
      },
    );
  });

  it("property: whatever the spelling of a URL, a visitor never receives another visitor's values through Varnish", async () => {
    // test/app's `naive/:id` is shared (declares the currency cookie) and reads the raw cookie
    // header and undeclared headers; the others are private, without a policy, or not found.
    const paths = ['/naive/5', '/naive-private/5', '/naive-default/5', '/seen/3', '/nope/x'];
    const target = fc.constantFrom(...paths).chain(spellingOf);
    await fc.assert(
      fc.asyncProperty(target, visitor, visitor, async (spelling, first, second) => {
        await get(spelling, headersOf(first));
        for (const next of [headersOf(second), {}]) {
          const res = await get(spelling, next);
          const leaked = canariesOf(first).filter(
            (c) => res.text.includes(c) || JSON.stringify(res.headers).includes(c),
          );
          assert.deepEqual(
            leaked,
            [],
            `${spelling} (${res.status}, ${res.headers['x-cache']}): another visitor's values`,
          );
        }
      }),
      { numRuns: 80 },
    );
  });

  it("purges a page by its data's own tag (api:…) and by its path, as the origin names them", async () => {
    await stored(at('/data/5'));
    await revalidate({ groups: ['api:item-5'], mode: 'hard' });
    assert.equal((await get(at('/data/5'))).headers['x-cache'], 'miss', 'gone by its API tag');
    await stored(at('/products/55'));
    await revalidate({ paths: [at('/products/55')], mode: 'hard' });
    assert.equal((await get(at('/products/55'))).headers['x-cache'], 'miss', 'gone by its path');
    // Its other spellings of the path are other pages of Varnish's, each tagged with its own path.
    await stored(at('/products/55?ref=mail'));
    await revalidate({ paths: [at('/products/55')], mode: 'hard' });
    assert.equal((await get(at('/products/55?ref=mail'))).headers['x-cache'], 'miss');
  });

  it("after a soft purge, Varnish's own refetch gets a page it keeps as fresh, not a miss for two minutes", async () => {
    const path = at('/products/56');
    await stored(path);
    await revalidate({ groups: ['product-56'] });
    const stale = await get(path);
    assert.equal(stale.headers['x-cache'], 'hit', 'the stale page once, refreshed meanwhile');
    const seen = [];
    const fresh = await waitFor(
      async () => {
        const page = await get(path);
        seen.push(
          `${page.headers['x-cache']} age=${page.headers.age} ${page.headers['cache-status']}`,
        );
        return page.headers['x-cache'] === 'hit' && /ttl=[1-9]/.test(page.headers['cache-status'])
          ? page
          : undefined;
      },
      {
        what: 'the refreshed page stored in Varnish',
        timeoutMs: 4000,
        everyMs: 100,
        seen: () => seen.join('\n'),
      },
    );
    assert.ok(Number(fresh.headers.age) < 60, fresh.headers.age);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await get(path)).headers['x-cache'],
        'hit',
        `stored fresh:\n${seen.join('\n')}`,
      );
    }
  });

  it('property: purging a group removes every page carrying it and no page carrying only others', async () => {
    // Group names as an app (addCacheGroups) or an API (Cache-Groups) may spell them: printable
    // ASCII, separators, quotes, slashes, percent signs, colons and all.
    const char = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
    const name = fc.string({ unit: char, minLength: 1, maxLength: 24 });
    /** The object Varnish answers `path` with: a hit's second X-Varnish id. */
    const objectOf = async (path) => {
      const page = await get(path);
      const [, object] = page.headers['x-varnish'].split(' ');
      return page.headers['x-cache'] === 'hit' ? object : undefined;
    };
    let next = 1000;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(name, { minLength: 2, maxLength: 4 }),
        fc.array(fc.array(fc.nat(3), { maxLength: 3 }), { minLength: 2, maxLength: 4 }),
        fc.nat(3),
        fc.constantFrom('soft', 'hard'),
        async (pool, picks, which, mode) => {
          const purged = pool[which % pool.length];
          const pages = [];
          for (const pick of picks) {
            const id = next++;
            const groups = [...new Set(pick.map((i) => pool[i % pool.length]))];
            api.tag(id, groups);
            const path = at(`/data/${id}`);
            await get(path);
            const before = await objectOf(path);
            assert.ok(before, `${path} stored in Varnish`);
            pages.push({ path, before, carries: groups.includes(purged) });
          }
          await revalidate({ groups: [`api:${purged}`], mode });
          // A page carrying the group is another object from now on (hard: fetched at once; soft:
          // served stale once while Varnish refetches it); any other is still the one stored.
          for (const { path, before } of pages.filter((page) => page.carries)) {
            await waitFor(async () => (await objectOf(path)) !== before, {
              what: `${path} fetched again after purging ${JSON.stringify(purged)} (${mode})`,
              timeoutMs: 3000,
              everyMs: 50,
            });
          }
          for (const { path, before } of pages.filter((page) => !page.carries)) {
            assert.equal(
              await objectOf(path),
              before,
              `${path} carries no ${JSON.stringify(purged)}, yet ${mode} purging it dropped it`,
            );
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('refuses purges from elsewhere than the purgers and malformed ones', async () => {
    const bad = await request(varnish.url, '/.origin/purge/sometimes/product-1', {
      method: 'PURGE',
    });
    assert.equal(bad.status, 400);
  });
});

// What ng add writes, and the minimal app has, before any route declares an input: vmod cookie's
// keep("") keeps no cookie, so nothing of a visitor's cookies is in the key or put in front of them.
describe('inputs.vcl for routes that declare no input', () => {
  let origin;
  let varnish;
  before(async () => {
    assert.equal(inputsVcl([{ path: '**' }]), vclForInputs([]));
    ({ origin, varnish } = await originBehindVarnish(vclForInputs([])));
  });
  after(async () => {
    await origin?.stop();
    await varnish?.stop();
  });

  it('compiles, keys a shared page by its URL alone and passes the cookies on as the visitor sent them', async () => {
    const visitors = ['sid=canaryone; _ga=GA1.2.3; currency=USD', 'sid=canarytwo', ''];
    const pages = [];
    for (const cookie of visitors)
      pages.push(await request(varnish.url, '/products/5', { headers: cookie ? { cookie } : {} }));
    assert.deepEqual(
      pages.map((page) => [page.status, page.headers['x-cache']]),
      [
        [200, 'miss'],
        [200, 'hit'],
        [200, 'hit'],
      ],
    );
    // A private page lists the headers its render got: the visitor's cookies, each once.
    const own = await request(varnish.url, '/naive-private/5', {
      headers: { cookie: visitors[0] },
    });
    assert.equal(own.headers['x-cache'], 'miss');
    const seen = JSON.parse(
      /<pre class="headers">([^<]*)<\/pre>/.exec(own.text)[1].replaceAll('&quot;', '"'),
    );
    // Exactly as the visitor sent it: nothing normalized goes in front when nothing is declared.
    assert.equal(seen.find(([name]) => name === 'cookie')?.[1], visitors[0]);
  });
});
