// The render cache's isolation rules as a property over generated requests, shared by the tests of
// one process (render-cache.test.mjs) and of several sharing Redis (shared-cache.test.mjs).
import assert from 'node:assert/strict';
import fc from 'fast-check';

/**
 * Asserts that a generated request (a product id, a spelling of its path, cookies, Authorization)
 * shares a page exactly when its path is plain and canonical, whatever cookies or credentials it
 * carries (the route declares none: they never reach its render): otherwise its Cache-Status
 * matches nothing of `shared` (a hit, a collapse, a store); and that every 200 is the product's own
 * page, the same for every visitor.
 * `send(which, path, headers)` sends it to origin number `which` (below `origins`).
 * @param {{ ids: string[], origins?: number, shared: RegExp, numRuns: number,
 *   send: (which: number, path: string, headers: Record<string, string>) => Promise<import('../../scripts/lib/http.mjs').HttpResponse> }} options
 */
export async function assertCacheIsolation({ ids, origins = 1, shared, numRuns, send }) {
  const spelling = fc.constantFrom('', '', '', '/', ';a', '?q=1', '//', '%2F');
  const cookie = fc.option(fc.constantFrom('session=1', 'theme=dark', '_ga=GA1.2', 'a=b; c=d'));
  const authorization = fc.option(fc.constantFrom('Bearer t', 'Basic eDp5'));
  const expected = new Map();
  await fc.assert(
    fc.asyncProperty(
      fc.nat(origins - 1),
      fc.constantFrom(...ids),
      spelling,
      cookie,
      authorization,
      async (which, id, tail, cookieValue, authorizationValue) => {
        const path =
          tail === '//'
            ? `/products//${id}`
            : tail === '%2F'
              ? `/products%2F${id}`
              : `/products/${id}${tail}`;
        const headers = {
          ...(cookieValue ? { cookie: cookieValue } : {}),
          ...(authorizationValue ? { authorization: authorizationValue } : {}),
        };
        const res = await send(which, path, headers);
        const status = res.headers['cache-status'] ?? '';
        const shareable = tail === '';
        if (!shareable) {
          assert.ok(!shared.test(status), `${path} ${JSON.stringify(headers)}: ${status}`);
        } else {
          assert.match(status, /hit|stored/, `${path}: ${status}`);
        }
        if (res.status === 200 && tail !== '%2F') {
          // The page itself is the product's, whichever way (and by whichever process) it was answered.
          const body = res.text.replace(/ng-server-context="[^"]*"/, '');
          expected.set(id, expected.get(id) ?? body);
          assert.equal(body, expected.get(id), path);
        }
      },
    ),
    { numRuns },
  );
}
