// What a render sees of the request (server/request/), over real HTTP on the tests' app, for the
// engine of this run (scripts/each-engine.mjs runs both): a shared page's render sees its route's
// declared inputs, normalized, and nothing else, in this process and across the shared tier; a
// private page sees the client's request. test/app: `seen/:id` declares a `currency` cookie
// (EUR, USD, GBP; EUR by default) and an `X-AB-Bucket` header (a, b; a) and writes everything its
// REQUEST holds into the page; `private-seen` is the same page with `private, no-store`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { request, startOrigin, at } from '../helpers/origin.mjs';

/** Every process behind one load balancer sees the same Host: their cache keys agree. */
const HOST = 'localhost:4000';
const CURRENCIES = ['EUR', 'USD', 'GBP'];

/** What the page says its REQUEST held. */
function seenBy(page) {
  const json = /<pre class="request">([^<]*)<\/pre>/.exec(page.text)?.[1];
  assert.ok(json, `no request in the page:\n${page.text.slice(0, 300)}`);
  return JSON.parse(
    json.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&#39;', "'"),
  );
}

/** A canary: a value nothing but this request could put into a page. */
const canary = fc.stringMatching(/^[a-z0-9]{6}$/).map((text) => `canary${text}`);

/** A visitor's request: any cookies, credentials and headers, canaries in each. */
const visitor = fc.record({
  id: fc.integer({ min: 1, max: 40 }),
  currency: fc.option(fc.oneof(fc.constantFrom(...CURRENCIES, 'usd', 'JPY', ''), canary)),
  bucket: fc.option(fc.oneof(fc.constantFrom('a', 'b', 'c'), canary)),
  cookies: fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,8}$/), canary), { maxLength: 4 }),
  authorization: fc.option(canary.map((value) => `Bearer ${value}`)),
  extra: fc.option(
    fc.tuple(fc.constantFrom('x-user', 'accept-language', 'x-forwarded-host'), canary),
  ),
});

function headersOf({ currency, bucket, cookies, authorization, extra }) {
  const cookie = [
    ...cookies.map(([name, value]) => `${name}=${value}`),
    ...(currency === null ? [] : [`currency=${currency}`]),
  ].join('; ');
  return {
    host: HOST,
    ...(cookie === '' ? {} : { cookie }),
    ...(bucket === null ? {} : { 'x-ab-bucket': bucket }),
    ...(authorization === null ? {} : { authorization }),
    ...(extra === null ? {} : { [extra[0]]: extra[1] }),
  };
}

/** The currency and bucket a request must get: the first `currency` cookie it sent, else EUR. */
function expected(v) {
  const first = [...v.cookies, ...(v.currency === null ? [] : [['currency', v.currency]])].find(
    ([name]) => name === 'currency',
  )?.[1];
  return {
    currency: CURRENCIES.includes(first) ? first : 'EUR',
    bucket: v.bucket === 'b' ? 'b' : 'a',
  };
}

/** Checks one shared answer against the request that got it. */
function assertShared(page, v) {
  assert.equal(page.status, 200);
  assert.doesNotMatch(
    page.text,
    /canary/,
    'a value its route does not declare is in a shared page',
  );
  const seen = seenBy(page);
  const want = expected(v);
  assert.deepEqual(
    seen.headers.sort(),
    [
      ['cookie', `currency=${want.currency}`],
      ['host', HOST],
      ['x-ab-bucket', want.bucket],
    ],
    'the render saw its declared inputs, normalized, and nothing else',
  );
  assert.equal(seen.url, `http://${HOST}${at(`/seen/${v.id}`)}`);
  assert.match(page.text, new RegExp(`<p class="currency">${want.currency}</p>`));
  assert.equal(page.headers.vary, 'Cookie, x-ab-bucket, Accept-Encoding');
}

describe('what a render sees of the request', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { NG_ALLOWED_HOSTS: 'localhost' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('property: a shared page holds its declared inputs, normalized, and never another value of the request', async () => {
    await fc.assert(
      fc.asyncProperty(visitor, async (v) => {
        assertShared(await request(origin.url, at(`/seen/${v.id}`), { headers: headersOf(v) }), v);
      }),
      { numRuns: 60 },
    );
  });

  it('serves each combination of inputs its own page, and every visitor one of them', async () => {
    const statuses = [];
    for (const currency of [...CURRENCIES, 'JPY', undefined]) {
      const page = await request(origin.url, at('/seen/99'), {
        headers: { host: HOST, cookie: `sid=alice; currency=${currency}` },
      });
      statuses.push(page.headers['cache-status']);
      assert.match(
        page.text,
        new RegExp(`<p class="currency">${CURRENCIES.includes(currency) ? currency : 'EUR'}</p>`),
      );
    }
    // EUR, USD, GBP rendered once each; JPY and no currency are EUR's page.
    assert.deepEqual(
      statuses.map((status) => (/hit/.test(status) ? 'hit' : 'miss')),
      ['miss', 'miss', 'miss', 'hit', 'hit'],
    );
  });

  it("a private page's render sees the client's request: its cookies, credentials and headers", async () => {
    const page = await request(origin.url, at('/private-seen'), {
      headers: {
        host: HOST,
        cookie: 'sid=canaryprivate; currency=GBP',
        authorization: 'Bearer canarytoken',
        'x-user': 'canaryuser',
        'x-forwarded-host': 'evil.example',
      },
    });
    assert.equal(page.status, 200);
    assert.equal(page.headers['cache-control'], 'private, no-store');
    assert.equal(page.headers['cache-status'], undefined, 'never the render cache');
    const seen = new Map(seenBy(page).headers);
    assert.equal(seen.get('cookie'), 'sid=canaryprivate; currency=GBP');
    assert.equal(seen.get('authorization'), 'Bearer canarytoken');
    assert.equal(seen.get('x-user'), 'canaryuser');
    assert.equal(seen.get('host'), HOST);
    assert.equal(seen.has('x-forwarded-host'), false, 'X-Forwarded-* only from a trusted proxy');
    assert.match(page.text, /<p class="currency">GBP<\/p>/);
  });

  it('answers any Cookie header it accepts: malformed, oversized or repeated values are the default', async () => {
    for (const cookie of [
      'currency',
      'currency=',
      '=USD',
      ';;;',
      'currency=USD; currency=GBP',
      `currency=${'U'.repeat(8000)}`,
      'currency="USD"',
      'currency=\tUSD ',
      Array.from({ length: 300 }, (_, i) => `c${i}=${i}`).join('; '),
    ]) {
      const page = await request(origin.url, at('/seen/7'), { headers: { host: HOST, cookie } });
      assert.equal(page.status, 200, cookie.slice(0, 40));
      const currency = /<p class="currency">(\w+)<\/p>/.exec(page.text)[1];
      assert.ok(['EUR', 'USD'].includes(currency), `${cookie.slice(0, 40)} gave ${currency}`);
    }
  });
});

describe('what a render sees of the request, across the shared tier', () => {
  let redis;
  let origins;
  before(async () => {
    redis = await startRedis();
    const env = { NG_ALLOWED_HOSTS: 'localhost', REDIS_URL: redis.url };
    origins = await Promise.all([startOrigin({ env }), startOrigin({ env })]);
  });
  after(async () => {
    await Promise.all((origins ?? []).map((origin) => origin.stop()));
    await redis?.stop();
  });

  it('property: a page one process rendered for one visitor holds nothing of that visitor when another process serves it', async () => {
    await fc.assert(
      fc.asyncProperty(visitor, visitor, async (first, second) => {
        const id = 100 + first.id;
        const rendered = await request(origins[0].url, at(`/seen/${id}`), {
          headers: headersOf(first),
        });
        assertShared(rendered, { ...first, id });
        const served = await request(origins[1].url, at(`/seen/${id}`), {
          headers: headersOf(second),
        });
        assertShared(served, { ...second, id });
      }),
      { numRuns: 25 },
    );
  });
});
