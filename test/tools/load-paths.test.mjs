// load-paths.json: what the bench, soak and profile load. Bad files fail with the field named; the
// demo's file keeps the bench's historical rotation; every id of a range, or value of a list, comes
// once before repeats.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseLoadPaths, readLoadPaths, rotation } from '../../scripts/lib/load-paths.mjs';

describe('load-paths.json', () => {
  it("this project's file parses (whatever app it names)", () => {
    const paths = readLoadPaths();
    assert.match(paths.prerendered, /^\//);
  });

  it("a rotation over the demo's ids is the bench's historical one", () => {
    // The ids the bench used before the file existed: ((k × 7919 + 12345) mod 999999) + 1.
    const at = rotation(1, 999_999);
    for (const k of [0, 1, 2, 99, 123_456])
      assert.equal(at(k), ((k * 7919 + 12_345) % 999_999) + 1);
  });

  it('names the field in every error', () => {
    const cases = [
      [[], /\(top level\)/],
      [{}, /"prerendered"/],
      [{ prerendered: 'index.html' }, /"prerendered"/],
      [{ prerendered: '/', extra: 1 }, /"extra" is not a field/],
      [{ prerendered: '/', clientOnly: 'x' }, /"clientOnly"/],
      [{ prerendered: '/', rendered: { path: '/p', ids: [1, 2] } }, /"rendered.path"/],
      [{ prerendered: '/', rendered: { path: '/p/{id}/{id}', ids: [1, 2] } }, /"rendered.path"/],
      [{ prerendered: '/', rendered: { path: '/p/{id}', ids: [2, 1] } }, /"rendered.ids"/],
      [{ prerendered: '/', rendered: { path: '/p/{id}', ids: [1.5, 2] } }, /"rendered.ids"/],
      [
        { prerendered: '/', rendered: { path: '/p/{id}', ids: [1, 2], status: 99 } },
        /"rendered.status"/,
      ],
      [
        { prerendered: '/', rendered: { path: '/p/{id}', ids: [1, 2], cached: 'yes' } },
        /"rendered.cached"/,
      ],
      [
        { prerendered: '/', rendered: { path: '/p/{id}' } },
        /"rendered" needs either "ids" .* or "values"/,
      ],
      [
        { prerendered: '/', rendered: { path: '/p/{id}', ids: [1, 2], values: ['a'] } },
        /"rendered" needs either/,
      ],
      [{ prerendered: '/', rendered: { path: '/r/{slug}', values: [] } }, /"rendered.values"/],
      [{ prerendered: '/', rendered: { path: '/r/{slug}', values: 'ramen' } }, /"rendered.values"/],
      [
        { prerendered: '/', rendered: { path: '/r/{slug}', values: ['ramen', ''] } },
        /"rendered.values"/,
      ],
      [
        { prerendered: '/', rendered: { path: '/r/{slug}', values: ['ramen', 'ramen'] } },
        /"rendered.values" must not repeat/,
      ],
      [
        { prerendered: '/', rendered: { path: '/r/{slug}', values: ['pad thai'] } },
        /"rendered.values" "pad thai" does not make a path/,
      ],
      [
        { prerendered: '/', rendered: { path: '/r/{slug}/{slug}', values: ['a'] } },
        /"rendered.path"/,
      ],
    ];
    for (const [raw, field] of cases)
      assert.throws(() => parseLoadPaths(raw), field, JSON.stringify(raw));
  });

  it('defaults: status 200, not cached, a not-found path', () => {
    const paths = parseLoadPaths({ prerendered: '/', rendered: { path: '/a/{id}', ids: [5, 9] } });
    assert.equal(paths.rendered.status, 200);
    assert.equal(paths.rendered.cached, false);
    assert.equal(paths.notFound, '/no-such-page');
    assert.equal(paths.rendered.at(0).startsWith('/a/'), true);
  });

  it('takes a list of values for a route keyed by something else than a number', () => {
    const paths = parseLoadPaths({
      prerendered: '/',
      rendered: { path: '/recipes/{slug}', values: ['pancakes', 'ramen', 'pho', 42], cached: true },
    });
    const { rendered } = paths;
    assert.equal(rendered.count, 4);
    assert.equal(rendered.label, '4 values of {slug}');
    assert.equal(rendered.valueAt(3), '42');
    const firstRound = Array.from({ length: 4 }, (_, k) => rendered.at(k));
    assert.deepEqual(
      [...firstRound].sort(),
      ['/recipes/42', '/recipes/pancakes', '/recipes/pho', '/recipes/ramen'],
      'each value once',
    );
    assert.equal(rendered.at(4), rendered.at(0), 'then it repeats');
    // A value is put in as it is written, even with characters a replacement pattern would read.
    assert.equal(
      parseLoadPaths({
        prerendered: '/',
        rendered: { path: '/r/{slug}', values: ['$&'] },
      }).rendered.at(0),
      '/r/$&',
    );
  });

  it('a range fills any placeholder, in the rotation it always had', () => {
    const { rendered } = parseLoadPaths({
      prerendered: '/',
      rendered: { path: '/items/{n}', ids: [1, 999_999] },
    });
    assert.equal(rendered.count, 999_999);
    assert.equal(rendered.label, 'ids 1..999999');
    const at = rotation(1, 999_999);
    for (const k of [0, 1, 99]) assert.equal(rendered.at(k), `/items/${at(k)}`);
    assert.equal(rendered.valueAt(0), '1');
  });

  it("names pages made of data (the bench's ssr-data) as it names rendered ones, and checks them the same", () => {
    const { data } = parseLoadPaths({
      prerendered: '/',
      data: { path: '/products/{id}', ids: [1, 300] },
    });
    assert.equal(data.count, 300);
    assert.equal(data.label, 'ids 1..300');
    assert.deepEqual(
      new Set(Array.from({ length: 300 }, (_, k) => data.at(k))).size,
      300,
      'each page once in a round',
    );
    assert.equal(parseLoadPaths({ prerendered: '/' }).data, undefined, 'optional');
    const cases = [
      [{ data: '/products/1' }, /"data" must be an object/],
      [
        { data: { path: '/products', ids: [1, 2] } },
        /"data.path" must be a path with one placeholder/,
      ],
      [{ data: { path: '/p/{id}' } }, /"data" needs either "ids" .* or "values"/],
      [{ data: { path: '/p/{id}', ids: [3, 1] } }, /"data.ids"/],
      [{ data: { path: '/p/{id}', values: ['a', 'a'] } }, /"data.values" must not repeat/],
      [{ data: { path: '/p/{id}', ids: [1, 2], cached: true } }, /"data.cached" is not a field/],
    ];
    for (const [raw, field] of cases)
      assert.throws(() => parseLoadPaths({ prerendered: '/', ...raw }), field, JSON.stringify(raw));
  });

  it("names a personal part's cookie, what it shows a visitor and a private page (the bench's ssr-personal)", () => {
    const { personal } = parseLoadPaths({
      prerendered: '/',
      personal: {
        path: '/products/7',
        cookie: 'sid',
        shows: 'Welcome back, {value:4} ({value})',
        private: { path: '/account', shows: '<code>{value}</code>' },
      },
    });
    assert.equal(personal.path, '/products/7');
    assert.equal(personal.cookie, 'sid');
    assert.deepEqual(personal.cookieOf(3), { name: 'sid', value: 'b3nch-3' });
    assert.equal(personal.shows('abcdef'), 'Welcome back, abcd (abcdef)');
    assert.equal(personal.private.path, '/account');
    assert.equal(personal.private.shows('ab'), '<code>ab</code>');
    assert.equal(parseLoadPaths({ prerendered: '/' }).personal, undefined, 'optional');
    const good = {
      path: '/p',
      cookie: 'sid',
      shows: '{value}',
      private: { path: '/a', shows: '{value}' },
    };
    const cases = [
      [{ personal: 'sid' }, /"personal" must be an object/],
      [{ personal: { ...good, path: 'p' } }, /"personal.path"/],
      [{ personal: { ...good, cookie: 'a b' } }, /"personal.cookie"/],
      [{ personal: { ...good, shows: 'Hello' } }, /"personal.shows" must be text with \{value\}/],
      [{ personal: { ...good, private: '/a' } }, /"personal.private" must be an object/],
      [
        { personal: { ...good, private: { path: 'a', shows: '{value}' } } },
        /"personal.private.path"/,
      ],
      [{ personal: { ...good, private: { path: '/a' } } }, /"personal.private.shows"/],
      [{ personal: { ...good, part: 'greeting' } }, /"personal.part" is not a field/],
    ];
    for (const [raw, field] of cases)
      assert.throws(() => parseLoadPaths({ prerendered: '/', ...raw }), field, JSON.stringify(raw));
  });

  it('a rotation visits every id of any range once before repeating', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 1, max: 3_000 }),
        (min, count) => {
          const at = rotation(min, min + count - 1);
          const seen = new Set(Array.from({ length: count }, (_, k) => at(k)));
          assert.equal(seen.size, count);
          for (const id of seen) assert.ok(id >= min && id < min + count);
          assert.equal(at(count), at(0), 'then it repeats');
        },
      ),
      { numRuns: 200 },
    );
  });
});
