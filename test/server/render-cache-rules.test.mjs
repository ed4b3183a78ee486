// The render cache's rules and store on their own (Node runs the TypeScript sources directly, types
// stripped): what may be stored and shared, keys, freshness with a clock the test moves, coalescing,
// bounds and purging. test/server/render-cache.test.mjs proves the same over HTTP on the real build.
// Angular's JIT compiler first: route-matcher.ts imports @angular/ssr, whose partially compiled
// classes need it outside an Angular build.
import '@angular/compiler';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RenderMode } from '@angular/ssr';
import fc from 'fast-check';
import { serializeDictionary, Token } from 'structured-headers';
import { createRouteLookup } from '../../server/pages/route-matcher.ts';
import {
  cacheKey,
  routeCacheRules,
  sharedCachePolicy,
  storablePolicy,
} from '../../server/render-cache/policy.ts';
import { strongEtag } from '../../server/http/entity-tag.ts';
import { answer } from '../../server/http/answer.ts';
import { createPageStore } from '../../server/render-cache/page-cache.ts';
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
  });
  const currency = { values: ['EUR', 'USD', 'GBP'], default: 'EUR' };
  const declaring = routeCacheRules({
    'Cache-Control': SHARED,
    'Render-Inputs': JSON.stringify({
      cookies: { currency },
      headers: { 'X-AB-Bucket': { values: ['a', 'b'], default: 'a' } },
    }),
  });

  it('needs a shared-cache policy on the route', () => {
    assert.equal(routeCacheRules(undefined), undefined);
    assert.equal(routeCacheRules({ 'Cache-Control': 'no-cache' }), undefined);
    assert.equal(routeCacheRules({ 'X-Frame-Options': 'DENY' }), undefined);
  });

  it('keys every request, cookies and credentials included, by its declared inputs alone', () => {
    const cookieName = fc.oneof(
      fc.constant('currency'),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
    );
    // Any text a Cookie header can carry as a value (a `;` ends the value).
    const cookieValue = fc.oneof(
      fc.constantFrom('EUR', 'USD', 'GBP', 'usd', ' GBP ', ''),
      fc.string().filter((value) => !value.includes(';')),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cookieName, cookieValue), { maxLength: 6 }),
        fc.option(fc.string()),
        fc.option(fc.oneof(fc.constantFrom('a', 'b', ' b ', 'c'), fc.string())),
        (cookies, authorization, bucket) => {
          const headers = {
            cookie: cookies.map(([name, value]) => `${name}=${value}`).join('; '),
            authorization: authorization ?? undefined,
            'x-ab-bucket': bucket ?? undefined,
          };
          // The first currency cookie decides; anything else of the request never shows.
          const first = cookies.find(([name]) => name === 'currency')?.[1]?.trim();
          const expected = currency.values.includes(first) ? first : 'EUR';
          const expectedBucket = bucket?.trim() === 'b' ? 'b' : 'a';
          assert.deepEqual(cacheKey(declaring, ORIGIN, '/products/1', '', headers), {
            key: `${ORIGIN}/products/1\ncookie:currency=${expected}\nheader:x-ab-bucket=${expectedBucket}`,
          });
          assert.deepEqual(cacheKey(rules, ORIGIN, '/products/1', '', headers), {
            key: `${ORIGIN}/products/1`,
          });
        },
      ),
    );
  });

  it('refuses a declaration that is not a closed set, or has too many variants, naming the route', () => {
    const declare = (inputs) =>
      routeCacheRules(
        { 'Cache-Control': SHARED, 'Render-Inputs': JSON.stringify(inputs) },
        undefined,
        'products/:id',
      );
    const values = (n) => Array.from({ length: n }, (_, i) => `v${i}`);
    for (const bad of [
      { cookies: { currency: { values: [], default: 'EUR' } } },
      { cookies: { currency: { values: ['EUR'], default: 'USD' } } },
      { cookies: { currency: { values: ['EUR', 42], default: 'EUR' } } },
      { cookies: { currency: { values: ['E;R'], default: 'E;R' } } },
      { cookies: { 'a b': { values: ['x'], default: 'x' } } },
      { headers: { 'x-a': { values: 'a|b', default: 'a' } } },
      { queries: {} },
      { undeclaredReads: 'quiet' },
      { cookies: {}, undeclaredReads: true },
      {
        cookies: {
          a: { values: values(9), default: 'v0' },
          b: { values: values(8), default: 'v0' },
        },
      },
    ]) {
      assert.throws(
        () => declare(bad),
        /route "products\/:id" declares its render inputs wrongly/,
        JSON.stringify(bad),
      );
    }
    assert.throws(
      () => routeCacheRules({ 'Cache-Control': SHARED, 'Render-Inputs': '{' }, undefined, 'x'),
      /route "x"/,
    );
    assert.ok(
      declare({
        cookies: {
          a: { values: values(8), default: 'v0' },
          b: { values: values(8), default: 'v0' },
        },
      }),
    );
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

describe('No-Vary-Search (draft-ietf-httpbis-no-vary-search, read by structured-headers)', () => {
  /** The rules of a cacheable route with this No-Vary-Search, and the values it reported unreadable. */
  const read = (noVarySearch) => {
    const unreadable = [];
    const rules = routeCacheRules(
      { 'Cache-Control': SHARED, 'No-Vary-Search': noVarySearch },
      (value) => unreadable.push(value),
    );
    return { significant: rules.significantParams, unreadable };
  };
  /** The names of `names` that select another page, or undefined when the route declares none. */
  const significantOf = (noVarySearch, names) => {
    const { significant } = read(noVarySearch);
    return significant && names.filter((name) => significant(name));
  };
  const PROBES = ['page', 'sort', 'utm_source', 'q', 'a"b', 'c\\d', 'café', 'a b', 'x&y=z', ''];

  it('reads the documented forms, the draft examples, and strings with escapes', () => {
    assert.deepEqual(significantOf('params', PROBES), []);
    assert.deepEqual(significantOf('params=?1', PROBES), []);
    assert.deepEqual(significantOf('params, except=("page")', PROBES), ['page']);
    assert.deepEqual(significantOf('params, except=()', PROBES), []);
    assert.deepEqual(significantOf('key-order, params, except=("page" "sort")', PROBES), [
      'page',
      'sort',
    ]);
    assert.deepEqual(
      significantOf('params=("utm_source")', PROBES),
      PROBES.filter((name) => name !== 'utm_source'),
    );
    // An sf-string's escapes (`\"`, `\\`) are read, not taken for its end.
    assert.deepEqual(significantOf(String.raw`params, except=("a\"b" "c\\d")`, PROBES), [
      'a"b',
      'c\\d',
    ]);
    // Keys are decoded as query names are (the draft's "parse a key"): `+`, then %-encoded UTF-8.
    assert.deepEqual(significantOf('params, except=("caf%C3%A9" "a+b" "x%26y%3Dz")', PROBES), [
      'café',
      'a b',
      'x&y=z',
    ]);
    assert.deepEqual(significantOf('params, except=("x&y=z" "?q")', ['x&y=z', '?q', 'q']), [
      'x&y=z',
      '?q',
    ]);
    // Parameters on members and items, and members the draft does not define, change nothing.
    assert.deepEqual(significantOf('params;a=1, except=("page";b=2);c, foo=(1 x :YQ==:)', PROBES), [
      'page',
    ]);
  });

  it('reads what RFC 9651 allows around members, and lets the last of a repeated member win', () => {
    for (const header of [
      '  params, except=("page")  ',
      'params ,except=("page")',
      'params,\texcept=("page")\t',
      'params, except=(  "page"  )',
      'params=("page"), params, except=("sort"), except=("page")',
    ]) {
      assert.deepEqual(significantOf(header, PROBES), ['page'], header);
      assert.deepEqual(read(header).unreadable, [], header);
    }
  });

  it('treats an unreadable or ill-typed value as no header, and reports it', () => {
    for (const header of [
      // The draft's own invalid examples.
      'key-order="not a boolean"',
      'params="not a boolean or inner list"',
      'params=(not-a-string)',
      'params=("a"), except=("x")',
      'params=(), except=()',
      'params=?0, except=("x")',
      'params, except=(not-a-string)',
      'params, except="not an inner list"',
      'params, except=?1',
      'except=("x")',
      'except=()',
      // Names as tokens (once silently ignored: every parameter ignored, `page` included).
      'params, except=(page)',
      'params=(utm_source)',
      'params, except=("page" sort)',
      // Not a Boolean, String or Inner List where one is needed.
      'params=?2',
      'params="x"',
      'params=1',
      'params=:YQ==:',
      'params=%"x"',
      'params=@1700000000',
      'key-order=?0, params=tok',
      'key-order=1',
      // Not a Dictionary at all.
      'params=("page"',
      'params, except=("page"',
      'params, except="page")',
      'params=(("page"))',
      'params, except=("page)',
      String.raw`params, except=("pa\ge")`,
      'params, except=("café")',
      'Params',
      'params,',
      ',params',
      'params,,except=("page")',
      'params = ("page")',
      'params=(\t"page")',
      '\tparams',
      'params\n',
      'params\u00a0',
      'params; except=("page")',
      'params, except=("page") ; x',
    ]) {
      const { significant, unreadable } = read(header);
      assert.equal(significant, undefined, header);
      assert.deepEqual(unreadable, [header], header);
    }
  });

  it('keys by every parameter for a valid value that ignores none, without calling it unreadable', () => {
    for (const header of ['', 'params=?0', 'params=()', 'key-order', 'key-order=?0', 'foo=1']) {
      const { significant, unreadable } = read(header);
      assert.deepEqual(unreadable, [], header);
      assert.deepEqual(significantOf(header, ['page', 'utm_source', '']), [
        'page',
        'utm_source',
        '',
      ]);
      assert.equal(typeof significant, 'function', header);
    }
    const everyParam = routeCacheRules({ 'Cache-Control': SHARED, 'No-Vary-Search': 'params=?0' });
    assert.deepEqual(cacheKey(everyParam, ORIGIN, '/list', 'utm_source=a&page=2', {}), {
      key: `${ORIGIN}/list?page=2&utm_source=a`,
    });
  });

  // sf-keys the draft does not define (RFC 9651: lowercase letter or `*` first).
  const unknownKey = fc
    .stringMatching(/^[a-z*][a-z0-9_\-.*]{0,8}$/)
    .filter((key) => !['params', 'except', 'key-order'].includes(key));
  // Any bare item, and any member value (an item or an inner list), each with parameters.
  const parameters = fc
    .uniqueArray(fc.tuple(unknownKey, fc.boolean()), { maxLength: 2, selector: ([key]) => key })
    .map((entries) => new Map(entries));
  const bareItem = fc.oneof(
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((n) => Math.round(n * 1000) / 1000),
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
    fc.stringMatching(/^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]{0,8}$/).map((t) => new Token(t)),
    fc.boolean(),
    fc.uint8Array({ maxLength: 6 }),
  );
  const item = fc.tuple(bareItem, parameters);
  const memberValue = fc.oneof(item, fc.tuple(fc.array(item, { maxLength: 3 }), parameters));
  const innerList = (items) => [items.map((value) => [value, new Map()]), new Map()];
  /** A parameter name; the header carries it as a query string would (the draft's "parse a key"). */
  const paramName = fc.oneof(
    // Printable ASCII, `"` and `\` included (escaped by the serializer); `%` and `+` would be decoded.
    fc.string({
      unit: fc
        .integer({ min: 0x20, max: 0x7e })
        .map((c) => String.fromCharCode(c))
        .filter((c) => c !== '%' && c !== '+'),
      maxLength: 8,
    }),
    fc.constantFrom('page', 'sort', 'utm_source'),
    fc.string({ unit: 'grapheme', maxLength: 4 }),
  );
  const encoded = (name) => new URLSearchParams([[name, '']]).toString().slice(0, -1);

  it('reads any valid Dictionary as the model says, whatever else it carries', () => {
    const declaration = fc.oneof(
      fc.record({
        params: fc.constant(true),
        except: fc.option(fc.array(paramName, { maxLength: 4 })),
      }),
      fc.record({ params: fc.array(paramName, { maxLength: 4 }), except: fc.constant(null) }),
      fc.record({ params: fc.constantFrom(false, undefined), except: fc.constant(null) }),
    );
    fc.assert(
      fc.property(
        declaration,
        fc.option(fc.boolean()),
        fc.uniqueArray(fc.tuple(unknownKey, memberValue), { maxLength: 3, selector: ([k]) => k }),
        fc.array(paramName, { maxLength: 4 }),
        fc.boolean(),
        fc.nat(),
        ({ params, except }, keyOrder, unknown, others, earlier, seed) => {
          const members = [
            ...(keyOrder === null ? [] : [['key-order', [keyOrder, new Map()]]]),
            ...(params === undefined
              ? []
              : [
                  [
                    'params',
                    Array.isArray(params) ? innerList(params.map(encoded)) : [params, new Map()],
                  ],
                ]),
            ...(except === null ? [] : [['except', innerList(except.map(encoded))]]),
            ...unknown,
          ];
          // Members in any order; with `earlier`, each first appears with another value, which
          // the last one replaces (RFC 9651 §4.2.2).
          const shuffled = members
            .map((member, i) => [(seed * (i + 7)) % 13, member])
            .sort(([a], [b]) => a - b)
            .map(([, member]) => member);
          const stale = shuffled.map(([key]) => [key, [new Token('stale'), new Map()]]);
          const header =
            (earlier && stale.length > 0 ? `${serializeDictionary(new Map(stale))}, ` : '') +
            serializeDictionary(new Map(shuffled));

          const probes = [
            ...(params === true ? (except ?? []) : []),
            ...(Array.isArray(params) ? params : []),
            ...others,
          ];
          const { significant, unreadable } = read(header);
          assert.deepEqual(unreadable, [], header);
          if (params === true) {
            const kept = new Set(except ?? []);
            assert.deepEqual(
              probes.map((name) => significant(name)),
              probes.map((name) => kept.has(name)),
              header,
            );
          } else {
            const ignored = new Set(Array.isArray(params) ? params : []);
            assert.deepEqual(
              probes.map((name) => significant(name)),
              probes.map((name) => !ignored.has(name)),
              header,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keys by the declared parameters alone, sorted, for any query', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(paramName, { maxLength: 4 }),
        fc.array(fc.tuple(paramName, fc.string({ maxLength: 4 })), { maxLength: 6 }),
        (except, pairs) => {
          const rules = routeCacheRules({
            'Cache-Control': SHARED,
            'No-Vary-Search': serializeDictionary({
              params: true,
              except: innerList(except.map(encoded)),
            }),
          });
          const query = new URLSearchParams(pairs).toString();
          const decision = cacheKey(rules, ORIGIN, '/list', query, {});
          const kept = [...new URLSearchParams(query)].filter(([name]) => except.includes(name));
          kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
          assert.deepEqual(decision, {
            key:
              kept.length === 0 ? `${ORIGIN}/list` : `${ORIGIN}/list?${new URLSearchParams(kept)}`,
          });
        },
      ),
    );
  });

  it('renders every query string of a route whose value is ill-typed or broken', () => {
    const notBoolean = memberValue.filter(([value]) => typeof value !== 'boolean');
    const notInnerListOfStrings = memberValue.filter(
      ([value]) => !Array.isArray(value) || value.some(([item]) => typeof item !== 'string'),
    );
    const strings = fc
      .array(paramName, { maxLength: 3 })
      .map((names) => innerList(names.map(encoded)));
    // Each a Dictionary the draft rejects: one member of the wrong type, or `except` without `params`.
    const illTyped = fc.oneof(
      notBoolean.map((keyOrder) => ({ 'key-order': keyOrder, params: [true, new Map()] })),
      notInnerListOfStrings
        .filter(([value]) => typeof value !== 'boolean')
        .map((params) => ({ params })),
      notInnerListOfStrings.map((except) => ({ params: [true, new Map()], except })),
      fc
        .tuple(fc.option(fc.oneof(strings, fc.constant([false, new Map()]))), strings)
        .map(([params, except]) => (params === null ? { except } : { params, except })),
    );
    const valid = fc.constantFrom('params', 'params, except=("page")', 'params=("utm_source")');
    // Each breaks the Dictionary syntax wherever it is put (RFC 9651 §4.2.2).
    const breakage = fc.constantFrom(
      'params=("page"',
      '(',
      ')',
      ',',
      '"',
      'params=?2',
      'Params',
      '=',
      ' ;',
      '\u00a0',
      '\n',
      'é',
    );
    const broken = fc
      .tuple(valid, breakage, fc.boolean())
      .map(([header, bad, before]) => (before ? `${bad}${header}` : `${header}${bad}`));
    const header = fc.oneof(
      fc
        .tuple(
          illTyped,
          fc.uniqueArray(fc.tuple(unknownKey, memberValue), { maxLength: 2, selector: ([k]) => k }),
        )
        .map(([members, unknown]) =>
          serializeDictionary(new Map([...Object.entries(members), ...unknown])),
        ),
      broken,
    );
    fc.assert(
      fc.property(header, fc.string({ minLength: 1, maxLength: 12 }), (value, query) => {
        const { significant, unreadable } = read(value);
        assert.equal(significant, undefined, value);
        assert.deepEqual(unreadable, [value]);
        const rules = routeCacheRules({ 'Cache-Control': SHARED, 'No-Vary-Search': value });
        assert.deepEqual(cacheKey(rules, ORIGIN, '/list', query, {}), { bypass: 'query' });
      }),
      { numRuns: 500 },
    );
  });

  it('reads huge values whole, and refuses huge broken ones without a crash', () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `p${i}_${'x'.repeat(40)}`);
    const header = serializeDictionary({ params: true, except: innerList(names) });
    assert.ok(header.length > 900_000);
    const { significant } = read(header);
    assert.equal(significant(names[0]), true);
    assert.equal(significant(names.at(-1)), true);
    assert.equal(significant('p20000'), false);
    assert.equal(significantOf(`params=("${'a'.repeat(1_000_000)}")`, ['a']).length, 1);
    for (const huge of [
      '('.repeat(100_000),
      `params=("${'a'.repeat(1_000_000)}`,
      `params, except=(${'"a" '.repeat(100_000)}b)`,
      `${'a=1, '.repeat(100_000)}params=tok`,
    ]) {
      assert.equal(read(huge).significant, undefined);
    }
  });

  it('is reported once per route at startup, with the route and the value', () => {
    const warnings = [];
    const cacheable = { 'Cache-Control': SHARED };
    createRouteLookup(
      [
        {
          path: 'ok',
          renderMode: RenderMode.Server,
          headers: { ...cacheable, 'No-Vary-Search': 'params' },
        },
        {
          path: 'bad',
          renderMode: RenderMode.Server,
          headers: { ...cacheable, 'No-Vary-Search': 'params, except=(page)' },
        },
        {
          path: 'none',
          renderMode: RenderMode.Server,
          headers: { ...cacheable, 'No-Vary-Search': 'params=?0' },
        },
        // Not cacheable: the origin does not read its No-Vary-Search.
        {
          path: 'private',
          renderMode: RenderMode.Server,
          headers: { 'Cache-Control': 'private', 'No-Vary-Search': '(' },
        },
      ],
      { warn: (fields, message) => warnings.push({ fields, message }) },
    );
    assert.equal(warnings.length, 1);
    assert.deepEqual(warnings[0].fields, {
      code: 'ORIGIN_ROUTE_UNREADABLE',
      route: 'bad',
      noVarySearch: 'params, except=(page)',
    });
    assert.match(warnings[0].message, /No-Vary-Search/);
  });
});

/** A cache with a clock the test moves (second-request admission unless told otherwise). */
function clockedCache(maxBytes = 1024 * 1024, admission = undefined) {
  const clock = { now: 1_000_000 };
  return { clock, cache: createPageStore({ maxBytes, now: () => clock.now, admission }) };
}
function page(body = 'page', policy = sharedCachePolicy(SHARED)) {
  const buffer = Buffer.from(body);
  const etag = strongEtag(buffer);
  return {
    answer: answer(200, ['ETag', etag], buffer, { validators: { etag } }),
    groups: [],
    storedAt: 0,
    policy,
    refreshFailed: false,
  };
}

describe('the page store (EntryStore of pages)', () => {
  it('is fresh for s-maxage, stale for stale-while-revalidate, then expired with stale-if-error left', () => {
    const { clock, cache } = clockedCache();
    cache.store('k', page());
    assert.equal(cache.entries.lookup('k').state, 'fresh');
    clock.now += 59_999;
    assert.equal(cache.entries.lookup('k').state, 'fresh');
    clock.now += 1;
    assert.equal(cache.entries.lookup('k').state, 'stale');
    clock.now += 599_999;
    assert.equal(cache.entries.lookup('k').state, 'stale');
    clock.now += 1;
    const expired = cache.entries.lookup('k');
    assert.equal(expired.state, 'expired');
    assert.equal(expired.usableOnError, true, 'within stale-if-error (1 h)');
    clock.now += 3_000_000; // 60 s + 1 h since stored: the last moment stale-if-error allows
    assert.equal(cache.entries.lookup('k').usableOnError, false);
    clock.now += 1;
    assert.equal(cache.entries.lookup('k').state, 'miss', 'gone once no rule can use it');
  });

  it('keeps a page whose refresh failed usable up to stale-if-error, then renders normally', async () => {
    const { clock, cache } = clockedCache();
    cache.store('k', page());
    clock.now += 600_000;
    assert.equal(cache.entries.lookup('k').state, 'stale');
    cache.refresh(
      'k',
      () => Promise.reject(new Error('render failed')),
      () => {},
    );
    await new Promise(setImmediate);
    clock.now += 100_000; // past stale-while-revalidate (660 s), within stale-if-error (3660 s)
    assert.equal(cache.entries.lookup('k').state, 'stale');
    clock.now += 3_000_000;
    assert.equal(cache.entries.lookup('k').state, 'miss');
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
      cache.productions.join('k', render, new AbortController().signal),
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
      cache.productions.join('k', render, new AbortController().signal),
    );
    assert.equal(renders, 2, 'a finished render is not shared with later requests');
    const failure = new Error('render failed');
    finish.reject(failure);
    for (const { result } of failing) {
      await assert.rejects(result, (error) => error === failure);
    }
    assert.equal(cache.productions.producing('k'), false);
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
      // Each waiter stops waiting with its signal's reason.
      cache.productions.join('k', render, waiter.signal).result.catch(() => {});
    }
    waiters[0].abort(new Error('gone'));
    waiters[1].abort(new Error('gone'));
    assert.equal(signal.aborted, false, 'one request still waits');
    waiters[2].abort(new Error('gone'));
    assert.equal(signal.aborted, true, 'nobody waits: the render may leave the queue');

    const waiter = new AbortController();
    cache.refresh('refreshed', render, () => {});
    const joined = cache.productions.join(
      'refreshed',
      () => assert.fail('collapsed'),
      waiter.signal,
    );
    joined.result.catch(() => {});
    waiter.abort(new Error('gone'));
    assert.equal(signal.aborted, false, 'a background refresh keeps its render');
  });

  it('gives a request that joins a render every earlier waiter left its result, or a render of its own', async () => {
    const { cache } = clockedCache();
    const renders = [];
    // As the render limiter does: a render still queued when nobody waits leaves the queue, a
    // moment later, failing with the reason of the last one to go; one in its slot runs on.
    const render = (signal) =>
      new Promise((resolve, reject) => {
        const at = renders.push(resolve) - 1;
        signal.addEventListener('abort', () => {
          if (at === 0) setTimeout(() => reject(signal.reason), 10);
        });
      });
    const abandon = (key) => {
      const left = new AbortController();
      cache.productions.join(key, render, left.signal).result.catch(() => {});
      left.abort(new Error('the client left'));
    };

    // Queued: the abandoned render fails for having been left, and the new request renders.
    abandon('queued');
    const next = cache.productions.join('queued', render, new AbortController().signal);
    assert.equal(renders.length, 1, 'joined while the abandoned render settles');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(renders.length, 2, "a render of its own, not the abandoned one's failure");
    renders[1]('the page');
    assert.equal(await next.result, 'the page');

    // In its slot: it runs to its end, and the new request gets its page; rendered once.
    abandon('running');
    const joined = cache.productions.join('running', render, new AbortController().signal);
    renders[2]('the running page');
    assert.equal(await joined.result, 'the running page');
    assert.equal(renders.length, 3);

    // A request that leaves too gets its own reason, and no render is started for it.
    abandon('both');
    const gone = new AbortController();
    const leaving = cache.productions.join('both', render, gone.signal);
    gone.abort(new Error('this client left too'));
    await assert.rejects(leaving.result, /this client left too/);
    assert.equal(renders.length, 4);
  });

  it('gives a request that joins a background refresh its result, failed or not', async () => {
    const { cache } = clockedCache();
    const failures = [];
    cache.refresh(
      'k',
      async () => ({ page: 'new', broken: true }),
      (error) => failures.push(error.message),
      (result) => (result.broken ? new Error('broken') : undefined),
    );
    const { result, collapsed } = cache.productions.join(
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
    const { cache } = clockedCache(maxBytes, 'first');
    for (let i = 0; i < 100_000; i++) {
      cache.store(`${ORIGIN}/products/${i}`, page('x'.repeat(500 + (i % 7) * 1000)));
      if (i % 1000 === 0) {
        assert.ok(cache.stats.bytes <= maxBytes, `${cache.stats.bytes} bytes after ${i} pages`);
      }
    }
    assert.ok(cache.stats.bytes <= maxBytes);
    assert.ok(cache.stats.entries < 2000, `${cache.stats.entries} entries`);
    assert.equal(
      cache.entries.lookup(`${ORIGIN}/products/99999`).state,
      'fresh',
      'the most recent page is kept',
    );
    assert.equal(
      cache.entries.lookup(`${ORIGIN}/products/0`).state,
      'miss',
      'the least recent went first',
    );
    cache.store('huge', page('x'.repeat(maxBytes + 1)));
    assert.equal(cache.entries.lookup('huge').state, 'miss');
    assert.ok(cache.stats.bytes <= maxBytes);
  });

  it('keeps what it holds through a scan of pages asked for once, and stores a page asked for again', () => {
    const maxBytes = 2 * 1024 * 1024;
    const { clock, cache } = clockedCache(maxBytes);
    const key = (i) => `${ORIGIN}/products/${i}`;
    const body = () => 'x'.repeat(2000);
    // While pages fit, every one is stored on its first request, as with `first`.
    let i = 0;
    while (i < 10_000 && cache.store(key(i), page(body())) === 'stored') i++;
    const held = cache.stats.entries;
    assert.ok(held > 700, `${held} pages stored before the cache was full`);
    for (i++; i < 100_000; i++) {
      assert.equal(cache.store(key(i), page(body())), 'deferred');
    }
    // Not a single page of the scan displaced one stored before it.
    assert.equal(cache.stats.entries, held);
    assert.ok(cache.stats.bytes <= maxBytes);
    assert.equal(cache.entries.lookup(key(0)).state, 'fresh', 'the first page stays');
    assert.equal(cache.entries.lookup(key(99_999)).state, 'miss');
    assert.equal(cache.stats.deferred, 100_000 - held);
    // Asked for a second time within its freshness: stored, the least recently used page out.
    assert.equal(cache.store(key(99_999), page(body())), 'stored');
    assert.equal(cache.entries.lookup(key(99_999)).state, 'fresh');
    assert.equal(cache.stats.entries, held);
    // Asked for again only after a stored copy would have stopped answering (s-maxage 60 and
    // stale-while-revalidate 600): that counts as a first time.
    assert.equal(cache.store(key(99_998), page(body())), 'stored', 'remembered from the scan');
    assert.equal(cache.store(key(200_000), page(body())), 'deferred');
    clock.now += 660_001;
    assert.equal(cache.store(key(200_000), page(body())), 'deferred');
    assert.equal(cache.store(key(200_000), page(body())), 'stored');
    // A page already stored is always replaced (a refresh), full or not.
    assert.equal(cache.store(key(99_999), page('new')), 'stored');
    assert.equal(cache.entries.lookup(key(99_999)).entry.answer.body.toString(), 'new');
    // Larger than the whole cache: refused as such, not counted as deferred.
    const deferred = cache.stats.deferred;
    assert.equal(cache.store('huge', page('x'.repeat(maxBytes + 1))), 'too-large');
    assert.equal(cache.stats.deferred, deferred);
    assert.ok(cache.stats.bytes <= maxBytes);
  });

  it('drops pages past their lifetime before it turns a new page away', () => {
    const maxBytes = 256 * 1024;
    const { clock, cache } = clockedCache(maxBytes);
    const key = (i) => `${ORIGIN}/products/${i}`;
    // Of use for 60 s, then never again (no stale-while-revalidate, no stale-if-error).
    const brief = sharedCachePolicy('public, s-maxage=60');
    const body = () => 'x'.repeat(2000);
    let i = 0;
    while (cache.store(key(i), page(body(), brief)) === 'stored') i++;
    const held = cache.stats.entries;
    assert.ok(held > 50, `${held} pages stored before the cache was full`);
    clock.now += 1_000;
    assert.equal(cache.store(key(++i), page(body(), brief)), 'deferred', 'all still of use');
    clock.now += 59_001;
    // Nothing touched the pages since they stopped being of use: they still count, until now.
    assert.equal(cache.stats.entries, held);
    assert.equal(cache.store(key(++i), page(body(), brief)), 'stored', 'a first request');
    assert.equal(cache.stats.entries, 1);
    assert.equal(cache.entries.lookup(key(i)).state, 'fresh');
    // Full again; the scan for expired pages runs at most once a second.
    while (cache.store(key(++i), page(body(), brief)) === 'stored');
    clock.now += 60_000;
    assert.equal(cache.store(key(++i), page(body(), brief)), 'deferred', 'scanned: none expired');
    clock.now += 1;
    assert.equal(cache.store(key(++i), page(body(), brief)), 'deferred', 'expired, not scanned');
    clock.now += 999;
    assert.equal(cache.store(key(i + 1), page(body(), brief)), 'stored', 'scanned again');
  });

  it('admits pages as its model says, under either admission', () => {
    // Pages stored with `lasting` never outlive the run (stale-if-error is a day); the others stop
    // being of use after s-maxage 60 and stale-while-revalidate 30, as the doorkeeper's keys do.
    const lasting = sharedCachePolicy(
      'public, s-maxage=60, stale-while-revalidate=30, stale-if-error=86400',
    );
    const brief = sharedCachePolicy('public, s-maxage=60, stale-while-revalidate=30');
    const LIFETIME_MS = 90_000;
    const keys = Array.from({ length: 10 }, (_, i) => `${ORIGIN}/p/${i}`);
    const step = fc.oneof(
      fc.record({
        store: fc.nat({ max: keys.length - 1 }),
        size: fc.integer({ min: 0, max: 3000 }),
        lasts: fc.boolean(),
      }),
      fc.record({ lookup: fc.nat({ max: keys.length - 1 }) }),
      // Long steps let pages expire, short ones come back within a second of a purge.
      fc.record({
        advance: fc.oneof(fc.integer({ min: 0, max: 90_000 }), fc.integer({ min: 0, max: 1500 })),
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('second', 'first'),
        fc.integer({ min: 2000, max: 12_000 }),
        fc.array(step, { maxLength: 40 }),
        (admission, maxBytes, steps) => {
          const { clock, cache } = clockedCache(maxBytes, admission);
          // The model: entries least recently used first (each with when it stops being of use,
          // and counted until something touches it), when each key was last turned away, and when
          // the cache last dropped its expired pages (at most once a second, when one does not fit).
          let stored = [];
          const seen = new Map();
          let purgedAt = -Infinity;
          const used = () => stored.reduce((sum, entry) => sum + entry.bytes, 0);
          const expired = (entry) => clock.now > entry.expiresAt;
          const fits = (bytes) => {
            if (used() + bytes <= maxBytes) return true;
            if (clock.now - purgedAt < 1000) return false;
            purgedAt = clock.now;
            stored = stored.filter((e) => !expired(e));
            return used() + bytes <= maxBytes;
          };
          for (const s of steps) {
            if ('advance' in s) {
              clock.now += s.advance;
            } else if ('lookup' in s) {
              const key = keys[s.lookup];
              let entry = stored.find((e) => e.key === key);
              if (entry && expired(entry)) {
                // Asked for past its lifetime: gone.
                stored = stored.filter((e) => e !== entry);
                entry = undefined;
              }
              assert.equal(cache.entries.lookup(key).state === 'miss', entry === undefined);
              if (entry) stored = [...stored.filter((e) => e !== entry), entry];
            } else {
              const key = keys[s.store];
              const p = page('x'.repeat(s.size), s.lasts ? lasting : brief);
              const { headers, notModifiedHeaders } = p.answer;
              const bytes =
                s.size + key.length + [...headers, ...notModifiedHeaders].join('').length + 512;
              let expected = 'deferred';
              if (bytes > maxBytes) {
                expected = 'too-large';
              } else if (
                stored.some((e) => e.key === key) ||
                fits(bytes) ||
                admission === 'first' ||
                (seen.has(key) && clock.now - seen.get(key) <= 90_000)
              ) {
                expected = 'stored';
              }
              assert.equal(cache.store(key, p), expected, JSON.stringify(s));
              const others = stored.filter((e) => e.key !== key);
              if (expected === 'stored') {
                seen.delete(key);
                const expiresAt = s.lasts ? Infinity : clock.now + LIFETIME_MS;
                stored = [...others, { key, bytes, expiresAt }];
                while (used() > maxBytes) stored.shift();
              } else if (expected === 'deferred') {
                seen.set(key, clock.now);
              } else {
                // lru-cache drops what the key held when it refuses a value for it.
                stored = others;
              }
            }
            assert.equal(cache.stats.entries, stored.length);
            assert.equal(cache.stats.bytes, used());
          }
        },
      ),
      { numRuns: 300 },
    );
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
    const limiter = new RenderLimiter({ maxRunning: 1, maxQueued: 10 });
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
