// deploy/varnish/: the template's CDN configuration, run by a real varnishd in front of a real
// origin (the tests' app, whose `seen/:id` declares a currency cookie and an A/B header, and whose
// product pages declare cache groups). What a CDN does for each kind of request, checked through it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { inputsVcl } from '../../deploy/varnish/inputs.mjs';
import { freePort } from '../../scripts/lib/ports.mjs';
import { DEFAULT_VCL, startVarnish } from '../../scripts/lib/varnish.mjs';
import { APP_DIST, DIST, ROOT, request, startOrigin } from '../helpers/origin.mjs';
import fc from 'fast-check';
import { readConfig } from '../../server/config.ts';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { canariesOf, headersOf, spellingOf, visitor } from '../helpers/visitors.mjs';

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
  before(async () => {
    const originPort = await freePort();
    varnish = await startVarnish({
      backendPort: originPort,
      inputsVcl: inputsVcl(await routesOf(DIST)),
    });
    origin = await startOrigin({
      env: {
        PORT: String(originPort),
        REVALIDATE_TOKEN: TOKEN,
        CDN_PURGE_URL: `${varnish.url}/.origin/purge/{mode}/{group}`,
        CDN_PURGE_METHOD: 'PURGE',
      },
    });
    // Varnish fetches from the origin once its health probe (/readyz) has seen it up.
    for (let tries = 0; (await request(varnish.url, '/readyz')).status !== 200; tries++) {
      assert.ok(tries < 100, `Varnish never saw the origin healthy:\n${varnish.output()}`);
      await sleep(100);
    }
  });
  after(async () => {
    await origin?.stop();
    await varnish?.stop();
  });

  const get = (path, headers = {}) => request(varnish.url, path, { headers });
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
    for (let i = 0; i < 40; i++) {
      const page = await get(path);
      const status = page.headers['cache-status'];
      seen.push(`${page.headers['x-cache']} age=${page.headers.age} ${status}`);
      if (/detail=revalidated/.test(status)) {
        assert.ok(
          Number(page.headers.age) >= 60,
          `the origin's stale answer kept as fresh: ${seen.join('\n')}`,
        );
      } else if (/ttl=(?:[1-9]|60)/.test(status) && i > 0) {
        return;
      }
      await sleep(100);
    }
    assert.fail(`Varnish never got the new page within 4 s:\n${seen.join('\n')}`);
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

  it('refuses purges from elsewhere than the purgers and malformed ones', async () => {
    const bad = await request(varnish.url, '/.origin/purge/sometimes/product-1', {
      method: 'PURGE',
    });
    assert.equal(bad.status, 400);
  });
});
