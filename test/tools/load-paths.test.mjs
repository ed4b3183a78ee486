// load-paths.json: what the bench, soak and profile load. Bad files fail with the field named; the
// demo's file keeps the bench's historical rotation; every id of a range comes once before repeats.
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
    for (const k of [0, 1, 2, 99, 123_456]) assert.equal(at(k), ((k * 7919 + 12_345) % 999_999) + 1);
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
      [{ prerendered: '/', rendered: { path: '/p/{id}', ids: [1, 2], status: 99 } }, /"rendered.status"/],
      [{ prerendered: '/', rendered: { path: '/p/{id}', ids: [1, 2], cached: 'yes' } }, /"rendered.cached"/],
    ];
    for (const [raw, field] of cases) assert.throws(() => parseLoadPaths(raw), field, JSON.stringify(raw));
  });

  it('defaults: status 200, not cached, a not-found path', () => {
    const paths = parseLoadPaths({ prerendered: '/', rendered: { path: '/a/{id}', ids: [5, 9] } });
    assert.equal(paths.rendered.status, 200);
    assert.equal(paths.rendered.cached, false);
    assert.equal(paths.notFound, '/no-such-page');
    assert.equal(paths.rendered.at(0).startsWith('/a/'), true);
  });

  it('a rotation visits every id of any range once before repeating', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 3_000 }), (min, count) => {
        const at = rotation(min, min + count - 1);
        const seen = new Set(Array.from({ length: count }, (_, k) => at(k)));
        assert.equal(seen.size, count);
        for (const id of seen) assert.ok(id >= min && id < min + count);
        assert.equal(at(count), at(0), 'then it repeats');
      }),
      { numRuns: 200 },
    );
  });
});
