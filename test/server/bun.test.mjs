// The same origin file under Bun (npm run serve:ssr:bun): the same answers as under Node.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeProduct } from '../app/src/app/products.ts';
import { BUN, ensureBenchPackages } from '../../bench/install.mjs';
import { request, startOrigin } from '../helpers/origin.mjs';

describe('the origin under Bun', () => {
  let node;
  let bun;
  before(async () => {
    // Bun is one of the bench's peers (bench/package.json), installed on demand.
    await ensureBenchPackages();
    [node, bun] = await Promise.all([startOrigin(), startOrigin({ executable: BUN })]);
  });
  after(async () => {
    await Promise.all([node?.stop(), bun?.stop()]);
  });

  for (const path of [
    '/',
    '/products/7',
    '/dashboard',
    '/no/such/page',
    '/favicon.ico',
    '/missing.js',
    '/healthz',
  ]) {
    it(`answers ${path} as under Node`, async () => {
      const [a, b] = await Promise.all([request(node.url, path), request(bun.url, path)]);
      assert.equal(b.status, a.status);
      assert.equal(b.headers['content-type'], a.headers['content-type']);
      assert.equal(b.headers['cache-control'], a.headers['cache-control']);
      assert.equal(b.headers.etag, a.headers.etag);
      if (path !== '/healthz') {
        assert.deepEqual(b.body, a.body);
      }
    });
  }

  it('renders each product from its id and revalidates with 304', async () => {
    const res = await request(bun.url, '/products/41');
    assert.ok(res.text.includes(`<h1>${makeProduct(41).name}</h1>`));
    const again = await request(bun.url, '/products/41', {
      headers: { 'if-none-match': res.headers.etag },
    });
    assert.equal(again.status, 304);
  });

  it('rejects a forged host and shuts down cleanly on SIGTERM', async () => {
    assert.equal((await request(bun.url, '/', { headers: { host: 'evil.example' } })).status, 400);
    assert.equal(await bun.stop(), 0);
  });
});
