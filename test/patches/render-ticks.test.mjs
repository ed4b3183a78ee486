// patches/@angular+core and @angular+platform-server: on the server, a render's change detections
// and the platform's teardown run on setImmediate instead of setTimeout (Node waits at least 1 ms
// for the latter). The patch keeps Angular's own code behind globalThis.ngServerTicksWithTimeout
// (RENDER_TICKS=timeout), so both run here, in one process, on the real build: same pages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { renderInProcess } from '../helpers/render.mjs';

/** Renders `path` with the patched scheduling or Angular's own; counts the zero-delay timers it set. */
async function render(path, angularsOwnTicks) {
  const { setTimeout: realSetTimeout } = globalThis;
  let zeroDelayTimers = 0;
  globalThis.setTimeout = function (callback, delay, ...args) {
    if (!(delay > 0)) zeroDelayTimers++;
    return realSetTimeout.call(this, callback, delay, ...args);
  };
  try {
    return { ...(await renderInProcess(path, { angularsOwnTicks })), zeroDelayTimers };
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
}

const page = fc.oneof(
  fc.integer({ min: 1, max: 999_999 }).map((id) => `/products/${id}`),
  fc.constantFrom('/products/0', '/products/abc', '/products/1/extra', '/missing', '/a/b/c', '/products/%20'),
  fc.stringMatching(/^[a-z0-9-]{1,12}$/).map((segment) => `/${segment}`),
);

describe('patch: server renders tick on setImmediate', () => {
  it('renders every page exactly as with Angular own setTimeout scheduling', async () => {
    await fc.assert(
      fc.asyncProperty(page, async (path) => {
        const original = await render(path, true);
        const patched = await render(path, false);
        assert.equal(patched.status, original.status, path);
        assert.equal(patched.html, original.html, path);
      }),
      { numRuns: 150 },
    );
  });

  it('leaves no zero-delay setTimeout in a render, where Angular own scheduling sets some', async () => {
    for (const path of ['/products/42', '/missing']) {
      const original = await render(path, true);
      const patched = await render(path, false);
      assert.ok(original.zeroDelayTimers >= 2, `${path}: Angular's scheduling set ${original.zeroDelayTimers} zero-delay timers`);
      assert.equal(patched.zeroDelayTimers, 0, `${path}: the patched render still waited on setTimeout`);
      assert.ok(patched.html.includes('<h1'), `${path}: no page rendered`);
    }
  });
});
