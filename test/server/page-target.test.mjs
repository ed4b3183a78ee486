// server/request/page-target.ts against Angular's own URL parser (@angular/router's
// DefaultUrlSerializer, the one the router navigates with): on generated paths made of the
// characters that matter to it (slashes, matrix parameters, outlets, percent-encoding), the origin
// reads the segments a route is matched against as the router does, and a path's one spelling is
// read by the router as the path itself (empty segments aside: the origin drops them, where the
// router stops reading at `//`).
import '@angular/compiler';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DefaultUrlSerializer } from '@angular/router';
import fc from 'fast-check';
import { canonicalPath, redirectTo, routeSegments } from '../../server/request/page-target.ts';

const serializer = new DefaultUrlSerializer();

/** The router's primary segments of a path, decoded, as it matches routes (Router.parseUrl: `/` when refused). */
function routerSegments(path) {
  let tree;
  try {
    tree = serializer.parse(path);
  } catch {
    tree = serializer.parse('/');
  }
  const segments = [];
  for (let group = tree.root.children['primary']; group; group = group.children['primary']) {
    segments.push(...group.segments.map((s) => s.path).filter((p) => p !== ''));
  }
  return segments;
}

/** All the router reads of a path: every outlet's segments and matrix parameters. */
function routerReads(path) {
  try {
    const read = (group) => ({
      s: group.segments
        .filter((s) => s.path !== '' || Object.keys(s.parameters).length > 0)
        .map((s) => [s.path, s.parameters]),
      c: Object.fromEntries(Object.entries(group.children).map(([k, g]) => [k, read(g)])),
    });
    return JSON.stringify(read(serializer.parse(path).root));
  } catch {
    return 'refused';
  }
}

/** Paths of the characters the parser treats apart, with well-formed percent-encoding only (the guard refuses the rest). */
const path = fc
  .array(
    fc.oneof(
      fc.constantFrom('/', '/', '/', ';', '=', '(', ')', ':', 'a', 'b', 'x', 'A', '~', '-', '.'),
      fc.constantFrom('%2F', '%2f', '%61', '%41', '%7E', '%3B', '%28', '%20', '%C3%A9', '%25'),
    ),
    { maxLength: 14 },
  )
  .map((parts) => `/${parts.join('')}`);

describe('page targets as Angular’s router reads them', () => {
  it('property: routeSegments reads the segments the router matches routes against', () => {
    fc.assert(
      fc.property(path, (p) => {
        assert.deepEqual(routeSegments(p), routerSegments(p), p);
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the examples of the issue as the router does', () => {
    for (const [p, segments] of [
      ['/account;', ['account']],
      ['/account;x=1', ['account']],
      ['/%61ccount', ['account']],
      ['/products/a%2Fb', ['products', 'a/b']],
      ['/products//9', ['products']],
      ['/products/9/', ['products', '9']],
      ['/a/(b)', ['a', 'b']],
      ['/a(side:b)', ['a']],
      ['/(b)', ['b']],
      ['/;x=1', []],
    ]) {
      assert.deepEqual(routeSegments(p), segments, p);
      assert.deepEqual(routerSegments(p), segments, `${p} (the router)`);
    }
  });

  it('property: a one spelling starts with one slash, is its own one spelling, and the router reads it as the path', () => {
    const roots = new Set(['/fr']);
    fc.assert(
      fc.property(
        fc.oneof(
          path,
          path.map((p) => `/fr${p}`),
        ),
        (p) => {
          const canonical = canonicalPath(p, roots);
          if (canonical === undefined) {
            // Refused: outlets with an empty segment after the leading slashes.
            assert.match(p, /[()]/, p);
            assert.match(p.replace(/^\/+/, '/'), /\/\//, p);
            return;
          }
          assert.match(canonical, /^\/(?!\/)|^\/$/, p);
          assert.equal(canonicalPath(canonical, roots), canonical, `${p}: not stable`);
          // A path the router refuses fails its navigation however it is spelled.
          const collapsed = /[()]/.test(p) ? p : p.replace(/\/{2,}/g, '/');
          if (routerReads(collapsed) !== 'refused') {
            assert.equal(routerReads(canonical), routerReads(collapsed), `${p} → ${canonical}`);
          }
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('spells a path once', () => {
    const roots = new Set(['/fr']);
    for (const [p, canonical] of [
      ['//products/9', '/products/9'],
      ['/products//9', '/products/9'],
      ['/products/9/', '/products/9'],
      ['/products/%39', '/products/9'],
      ['/a%2fb', '/a%2Fb'],
      ['/account;', '/account'],
      ['/account;;x=1;', '/account;x=1'],
      ['/Account', '/Account'],
      ['/fr/', '/fr/'],
      ['/fr//', '/fr/'],
      ['/fr', '/fr'],
      ['/de/', '/de'],
      ['//', '/'],
      ['/', '/'],
      ['/;/x', '/x'],
      ['/a/(b)', '/a/(b)'],
      ['//a/(b)', '/a/(b)'],
      ['/a//(b)', undefined],
    ]) {
      assert.equal(canonicalPath(p, roots), canonical, p);
    }
  });

  it('never redirects to another origin', () => {
    for (const location of ['//evil.example/', '/\\evil.example', 'https://evil.example/', '']) {
      assert.throws(() => redirectTo(location), /not a path of this origin/, location);
    }
    const answer = redirectTo('/products/9?utm_source=x');
    assert.equal(answer.status, 308);
    assert.deepEqual(answer.headers.slice(0, 4), [
      'Location',
      '/products/9?utm_source=x',
      'Cache-Control',
      'public, max-age=3600',
    ]);
  });
});
