// The server bundle's renderPart (createPartRenderer, src/app/personal-part.server.ts) on the built
// tests' app, in Node as the origin calls it: one application for one visitor's parts, each part
// its host element and the state it fetched, nothing of Angular's hydration in it; a part that
// throws, an unknown part and inputs that are not JSON reject the call.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { TEST_APP_DIST } from '../../scripts/lib/paths.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';

describe("renderPart of the tests' app", () => {
  let api;
  let renderPart;
  const asked = [];
  before(async () => {
    api = await serveOnLoopback((req, res) => {
      asked.push({ url: req.url, cookie: req.headers.cookie });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
      res.end(JSON.stringify({ name: '<esi:include src="/x"/> & </script>' }));
    });
    process.env.TEST_DATA_API = api.url;
    const bundle = pathToFileURL(join(TEST_APP_DIST, 'server', 'main.server.mjs')).href;
    ({ renderPart } = await import(bundle));
  });
  after(() => {
    delete process.env.TEST_DATA_API;
    return api?.close();
  });

  const render = (parts, cookie = 'sid=alice; other=1') =>
    renderPart({
      parts,
      url: 'http://shop.test/parts/7',
      request: new Request('http://shop.test/parts/7', { headers: { cookie } }),
      context: {},
      nonce: 'n0nce',
    });

  it('renders every asked part in one call: its host element, its state with the nonce, its cache groups', async () => {
    asked.length = 0;
    const output = await render([
      { name: 'visitor', inputs: { id: '7' } },
      { name: 'throws', inputs: { fail: false } },
    ]);
    assert.equal(output.parts.length, 2);
    const [visitor, fine] = output.parts;
    assert.match(visitor, /^<app-visitor-part>/);
    assert.match(visitor, /<span class="visitor-sid">alice<\/span>/);
    assert.match(visitor, /<span class="visitor-input">7<\/span>/);
    // The API's answer, asked with the visitor's cookie, printed as text and carried as state.
    assert.deepEqual(asked, [{ url: '/me', cookie: 'sid=alice; other=1' }]);
    assert.match(visitor, /&lt;esi:include src="\/x"\/&gt; &amp; &lt;\/script&gt;/);
    const state =
      /<script type="application\/json" data-origin-part-state nonce="n0nce">(.*)<\/script>$/.exec(
        visitor,
      );
    assert.ok(state, visitor);
    assert.doesNotMatch(state[1], /[<>&]/, 'nothing in the state can end its script or open ESI');
    assert.match(fine, /^<app-throws-part><span class="throws-fine">/);
    assert.equal(output.headers['cache-groups'], '"visitor-alice"');
    for (const part of output.parts) {
      assert.doesNotMatch(
        part,
        /ngh=|ng-version|ng-server-context|ngskiphydration/i,
        'no hydration annotation',
      );
    }
  });

  it('rejects when a part throws, when a part is not registered, when its inputs are not JSON', async () => {
    await assert.rejects(
      render([
        { name: 'visitor', inputs: { id: '1' } },
        { name: 'throws', inputs: { fail: true } },
      ]),
      /this part throws while rendering/,
    );
    await assert.rejects(render([{ name: 'cart', inputs: {} }]), /"cart" is not registered/);
    await assert.rejects(
      render([{ name: 'visitor', inputs: { id: Number.NaN } }]),
      /inputs\.id is NaN/,
    );
    await assert.rejects(render([{ name: 'visitor', inputs: { nope: 1 } }]), /has no input "nope"/);
  });
});
