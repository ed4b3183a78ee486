// What the engines do differently with the same request (docs/choosing-an-engine.md), asserted for
// the engine this run renders with (RENDER_ENGINE; scripts/each-engine.mjs runs both). The rest of
// test/server holds for both engines alike; the other differences are asserted where they show:
// a page whose component throws (faults.test.mjs), CRITICAL_CSS (config.test.mjs).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeProduct } from '../app/src/app/products.ts';
import { ENGINE, request, startOrigin } from '../helpers/origin.mjs';

describe(`router redirects (test/app: /moved → /products/4, /moved/:id → products/:id) with RENDER_ENGINE=${ENGINE}`, () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.stop();
  });

  if (ENGINE === 'common') {
    it('renders the target page at the requested URL: CommonEngine follows a redirect inside the render', async () => {
      for (const [path, id] of [
        ['/moved', 4],
        ['/moved/5', 5],
      ]) {
        const res = await request(origin.url, path);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.location, undefined, path);
        assert.ok(res.text.includes(makeProduct(id).name), `${path}: not the product page`);
      }
    });
  } else {
    it("answers 302 with the target and no page: Angular's engine does not render a redirect", async () => {
      const res = await request(origin.url, '/moved');
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/products/4');
      assert.equal(res.headers.vary, 'X-Forwarded-Prefix');
      assert.equal(res.text, '');
      // Its route declares no shared policy: it was answered from the visitor's request (a guard
      // may redirect by a cookie), so for the browser alone.
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.headers.etag, undefined, 'validators are for 2xx answers');
    });

    it("builds the Location without the client's X-Forwarded-*: they reach Angular's engine only behind TRUST_PROXY", async () => {
      // The engine prefixes a redirect with the request's X-Forwarded-Prefix when it trusts that
      // header (NG_TRUST_PROXY_HEADERS, which the engine reads and the origin does not). Trusted
      // here: the Location would move if a client's X-Forwarded-* reached the engine; without
      // TRUST_PROXY the origin never passes them on (server/request/render-request.ts).
      const trusting = await startOrigin({
        env: { NG_TRUST_PROXY_HEADERS: 'x-forwarded-prefix,x-forwarded-host' },
      });
      try {
        const res = await request(trusting.url, '/moved', {
          headers: {
            'x-forwarded-prefix': '/evil',
            'x-forwarded-host': 'evil.example',
            cookie: 'session=1',
          },
        });
        assert.equal(res.status, 302);
        assert.equal(res.headers.location, '/products/4');
        assert.equal(trusting.stderr(), '');
        assert.doesNotMatch(trusting.stdout(), /evil|x-forwarded/i);
      } finally {
        await trusting.stop();
      }
    });

    it("sends a wrong Location for a relative redirect with parameters (@angular/ssr 22.2's route extraction)", async () => {
      // The build resolves `moved/:id` → `products/:id` to `/moved/products/:id` and the engine
      // fills in `*` segments only. When this fails after an Angular update, Angular fixed it:
      // update docs/choosing-an-engine.md.
      const res = await request(origin.url, '/moved/5');
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/moved/products/:id');
    });
  }

  it('renders the target itself the same way with either engine', async () => {
    const res = await request(origin.url, '/products/4');
    assert.equal(res.status, 200);
    assert.ok(res.text.includes(makeProduct(4).name));
  });
});
