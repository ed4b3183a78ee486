// deploy/varnish/: the template's CDN configuration, run by a real varnishd in front of a real
// origin (the tests' app, whose `seen/:id` declares a currency cookie and an A/B header, whose
// product pages declare cache groups, and whose `parts/:id` has a personal part, assembled by
// Varnish with ESI). What a CDN does for each kind of request, checked through it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
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
      // As deployed behind it: the VCL overwrites what a trusted proxy says (X-Forwarded-*,
      // Surrogate-Capability), and says it assembles ESI, so pages with parts come as templates.
      TRUST_PROXY: 'true',
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
 * The API of test/app's `data/:id` and `parts-data/:id` pages: the catalog, and items whose groups
 * (the API's own Cache-Groups, which become the page's `api:` groups) and title a test sets per
 * item.
 */
async function startTaggingApi() {
  const groups = new Map();
  const titles = new Map();
  const api = await serveOnLoopback((req, res) => {
    const id = req.url.split('/').pop();
    const tags = req.url === '/catalog' ? ['catalog'] : (groups.get(id) ?? [`item-${id}`]);
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'public, max-age=60',
      'cache-groups': serializeCacheGroups(tags),
    });
    res.end(
      JSON.stringify(
        req.url === '/catalog' ? { name: 'catalog' } : { id, title: titles.get(id) ?? id },
      ),
    );
  });
  return {
    ...api,
    tag: (id, tags) => groups.set(String(id), tags),
    title: (id, title) => titles.set(String(id), title),
  };
}

/** The sids whose `visitor` part (test/app's parts/visitor.ts) an answer holds. */
const partsIn = (text) =>
  [...text.matchAll(/<span class="visitor-sid">([^<]*)<\/span>/g)].map((match) => match[1]);
/** What a surrogate that assembles ESI says (the VCL says it for every fetch). */
const ESI = { 'surrogate-capability': 'varnish="ESI/1.0"' };

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

  it('keeps what a client says of the host and scheme from the origin, which believes Varnish (TRUST_PROXY)', async () => {
    // The origin refuses a forwarded host or scheme it cannot parse (400): none reaches it.
    for (const forged of [
      { 'x-forwarded-host': 'forged host' },
      { 'x-forwarded-proto': 'forgedproto' },
    ]) {
      for (const path of [at('/products/9'), '/naive-private/9']) {
        const page = await get(path, forged);
        assert.equal(page.status, 200, `${path} ${JSON.stringify(forged)}`);
        assert.doesNotMatch(page.text, /forged/);
      }
    }
  });

  /** A page's ESI template and its first part's URL, as the origin answers a surrogate. */
  const templateOf = async (path) => {
    const template = await request(origin.url, path, { headers: ESI });
    assert.equal(template.headers['surrogate-control'], 'content="ESI/1.0"', path);
    const src = /<esi:include src="([^"]+)"\/>/.exec(template.text)?.[1];
    assert.ok(src, template.text);
    return { etag: template.headers.etag, src };
  };

  it("keeps a page with personal parts once and assembles each visitor's own parts into it (ESI)", async () => {
    const path = at('/parts/21');
    const visitors = [
      ['sid=alice21', ['alice21']],
      ['sid=bob21; _ga=GA1.2.3; currency=USD', ['bob21']],
      ['', []],
      ['sid=alice21', ['alice21']],
    ];
    const objects = new Set();
    for (const [i, [cookie, own]] of visitors.entries()) {
      const page = await get(path, cookie ? { cookie } : {});
      assert.equal(page.status, 200);
      assert.equal(page.headers['x-cache'], i === 0 ? 'miss' : 'hit', `${cookie}: one fetch`);
      objects.add(page.headers['x-varnish'].split(' ').at(-1));
      assert.deepEqual(partsIn(page.text), own, cookie);
      assert.equal(/class="visitor-placeholder"/.test(page.text), own.length === 0, cookie);
      assert.doesNotMatch(page.text, /<esi:|_origin\/part/, 'assembled, no template');
      assert.equal(page.headers['surrogate-control'], undefined);
      // The template's validators are no validators of a page whose parts change without it.
      assert.equal(page.headers.etag, undefined, cookie);
      assert.equal(page.headers['last-modified'], undefined, cookie);
      assert.equal(
        page.headers['cache-control'],
        cookie ? 'private, no-cache' : 's-maxage=60, stale-while-revalidate=600',
        `${cookie}: a page with a visitor's parts is no shared cache's`,
      );
    }
    assert.equal(objects.size, 2, 'every visitor after the first got the object the first stored');
    // Nor does Varnish answer 304 from the template's validator: the visitor's parts may be new.
    const { etag } = await templateOf(path);
    const again = await get(path, { cookie: 'sid=alice21', 'if-none-match': etag });
    assert.equal(again.status, 200);
    assert.deepEqual(partsIn(again.text), ['alice21']);
  });

  it('never stores a part: at one part URL each visitor gets their own, and no cookie the placeholder', async () => {
    const { src } = await templateOf(at('/parts/22'));
    for (const [cookie, own] of [
      ['sid=carol22', ['carol22']],
      ['sid=dave22; currency=GBP', ['dave22']],
      ['', []],
      ['sid=carol22', ['carol22']],
    ]) {
      const part = await get(src, cookie ? { cookie } : {});
      assert.equal(part.status, 200);
      assert.equal(part.headers['x-cache'], 'miss', `${cookie}: passed, never a hit`);
      assert.deepEqual(partsIn(part.text), own, cookie);
      assert.equal(/class="visitor-placeholder"/.test(part.text), own.length === 0, cookie);
    }
  });

  it('assembles gzip pages that decode to the same page, and never joins a part in a coding it cannot', async () => {
    const path = at('/parts/23');
    for (const cookie of ['sid=erin23', '']) {
      const headers = cookie ? { cookie } : {};
      const plain = await get(path, headers);
      const gzip = await get(path, { ...headers, 'accept-encoding': 'gzip' });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gzip.body).toString('utf8'), plain.text, cookie);
      assert.deepEqual(partsIn(plain.text), cookie ? ['erin23'] : []);
      // A client that takes brotli alone: the part comes uncompressed, Varnish sends it as is.
      const brotli = await get(path, { ...headers, 'accept-encoding': 'br' });
      assert.equal(brotli.headers['content-encoding'], undefined);
      assert.equal(brotli.text, plain.text, cookie);
    }
  });

  it('never gives a client a template, whatever it says it assembles', async () => {
    for (const path of [at('/parts/24'), at('/parts/24')]) {
      for (const cookie of ['sid=frank24', '']) {
        const page = await get(path, { ...ESI, ...(cookie ? { cookie } : {}) });
        assert.equal(page.headers['surrogate-control'], undefined);
        assert.doesNotMatch(page.text, /<esi:|_origin\/part/);
        assert.deepEqual(partsIn(page.text), cookie ? ['frank24'] : []);
      }
    }
  });

  it('never acts on ESI markup in the data a page prints: the page shows it as text', async () => {
    const leaks = {
      include: `<esi:include src='http://127.0.0.1:${new URL(api.url).port}/leak-include'/>`,
      comment: `<!--esi <esi:include src='/leak-comment'/> -->`,
    };
    const decode = (html) =>
      html
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&quot;', '"')
        .replaceAll('&#39;', "'")
        .replaceAll('&amp;', '&');
    for (const [id, title] of Object.entries(leaks)) {
      api.title(id, title);
      const page = await get(at(`/parts-data/${id}`), { cookie: `sid=grace-${id}` });
      assert.equal(page.status, 200);
      assert.deepEqual(partsIn(page.text), [`grace-${id}`]);
      // What a browser reads of it is the API's string: in text, in an attribute, in JSON-LD.
      const h1 = /<h1 class="title" data-title="([^"]*)">([^<]*)<\/h1>/.exec(page.text);
      assert.ok(h1, page.text);
      assert.equal(decode(h1[1]), title, 'the attribute');
      assert.equal(decode(h1[2]), title, 'the text');
      const jsonLd = /<script type="application\/ld\+json">([^<]*)<\/script>/.exec(page.text);
      assert.equal(JSON.parse(jsonLd?.[1] ?? 'null')?.name, title, 'the JSON-LD');
    }
    // Varnish asked for nothing the markup names: every request it handled, includes too.
    const urls = (await varnish.log('-g', 'raw', '-i', 'ReqURL')).match(/\S+$/gm) ?? [];
    assert.ok(
      urls.some((url) => url.startsWith('/_origin/part/')),
      'parts included',
    );
    assert.deepEqual(
      urls.filter((url) => /leak/.test(url)),
      [],
    );
  });

  it("property: generated visitors get their own part through Varnish, never another's", async () => {
    const plainVisitor = (sid) => ({
      sid,
      currency: 'EUR',
      cookies: [],
      user: `${sid}u`,
      authorization: null,
      bucket: null,
    });
    const target = fc.constantFrom(at('/parts/25'), at('/parts/26')).chain(spellingOf);
    await fc.assert(
      fc.asyncProperty(target, visitor, visitor, async (spelling, first, second) => {
        for (const [v, others] of [
          [first, []],
          [second, canariesOf(first)],
          [null, [...canariesOf(first), ...canariesOf(second)]],
        ]) {
          const res = await get(spelling, v === null ? {} : headersOf(v));
          for (const sid of partsIn(res.text)) {
            assert.equal(sid, v?.sid, `${spelling}: the part of ${sid}`);
          }
          const leaked = [...new Set(others)].filter((c) => c !== v?.sid && res.text.includes(c));
          assert.deepEqual(leaked, [], `${spelling} (${res.status}): another visitor's values`);
          // The page (not another page a spelling names): the visitor's own part, privately.
          if (v !== null && res.status === 200 && /class="page-id"/.test(res.text)) {
            assert.deepEqual(partsIn(res.text), [v.sid], spelling);
            assert.match(res.headers['cache-control'], /private/, spelling);
          }
        }
      }),
      {
        numRuns: 30,
        // A spelling the origin renders per request: its anonymous copy once stored here and given
        // to the next signed-in visitors (the second pair), with their parts' placeholders (a seed CI
        // found).
        examples: [
          [at('/parts/25%2F6'), ...['canary0aaaaa00', 'canarya0aaaa0a'].map(plainVisitor)],
          [at('/parts/25%2F6'), ...['canary0aaaaa01', 'canarya0aaaa0b'].map(plainVisitor)],
        ],
      },
    );
  });

  it('refuses purges from elsewhere than the purgers and malformed ones', async () => {
    const bad = await request(varnish.url, '/.origin/purge/sometimes/product-1', {
      method: 'PURGE',
    });
    assert.equal(bad.status, 400);
  });
});

describe("Varnish in front of two replicas: a page's parts go where the page is", () => {
  let varnish;
  let origins;
  before(async () => {
    const ports = [await freePort(), await freePort()];
    varnish = await startVarnish({
      backendPorts: ports,
      inputsVcl: inputsVcl(await routesOf(DIST)),
    });
    origins = await Promise.all(
      ports.map((port) => startOrigin({ env: { PORT: String(port), TRUST_PROXY: 'true' } })),
    );
    await waitFor(async () => Object.values(await varnish.health()).every(Boolean), {
      what: 'both origins healthy as Varnish sees them',
      timeoutMs: 10_000,
      everyMs: 100,
      seen: varnish.output,
    });
  });
  after(async () => {
    await Promise.all((origins ?? []).map((origin) => origin.stop()));
    await varnish?.stop();
  });

  it('fetches a part from the replica that rendered its page, which holds it in its render cache', async () => {
    const template = await request(origins[0].url, at('/parts/40'), { headers: ESI });
    const build = /\/_origin\/part\/([^/]+)\//.exec(template.text)?.[1];
    assert.ok(build, template.text);
    for (let id = 41; id <= 48; id++) {
      // A HEAD has Varnish fetch and keep the page, and include nothing.
      const page = await request(varnish.url, at(`/parts/${id}`), { method: 'HEAD' });
      assert.equal(page.headers['x-cache'], 'miss');
      const part = await request(varnish.url, `/_origin/part/${build}/0${at(`/parts/${id}`)}`);
      assert.match(part.text, /class="visitor-placeholder"/);
      assert.match(part.headers['cache-status'], /^render-cache; hit/, `/parts/${id}`);
    }
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
