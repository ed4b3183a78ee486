// patches/@koa/etag: CRC-32 + length instead of SHA-1 for string and Buffer bodies. Which responses
// get a tag, and what a conditional GET answers, stay exactly as with the original.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import freshFn from 'fresh';
import { pristinePackage } from '../helpers/pristine.mjs';

const require = createRequire(import.meta.url);
const patched = require('@koa/etag');
const original = require(pristinePackage('@koa/etag'));

/** Runs an etag middleware over a response with `body` and `status`; returns the ETag it set. */
async function tagOf(etag, body, { status = 200, existing } = {}) {
  const headers = existing ? { etag: existing } : {};
  const ctx = {
    body,
    status,
    response: {
      get: (name) => headers[name.toLowerCase()] ?? '',
      set etag(value) {
        headers.etag = value;
      },
    },
  };
  await etag()(ctx, async () => {});
  return headers.etag;
}

const body = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()),
);

describe('patch: @koa/etag with CRC-32', () => {
  it('tags exactly the responses the original tags', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(200, 204, 304, 404, 500), fc.boolean(), async (value, status, hasTag) => {
        const options = { status, existing: hasTag ? '"set-by-app"' : undefined };
        const [a, b] = [await tagOf(patched, value, options), await tagOf(original, value, options)];
        assert.equal(a === undefined, b === undefined);
        if (hasTag) {
          assert.equal(a, '"set-by-app"');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gives equal bodies equal tags and different bodies different tags', async () => {
    await fc.assert(
      fc.asyncProperty(body, body, async (x, y) => {
        const bytes = (value) => (Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
        const [tagX, tagY] = [await tagOf(patched, x), await tagOf(patched, y)];
        if (tagX !== undefined && tagY !== undefined) {
          assert.equal(tagX === tagY, bytes(x).equals(bytes(y)), `${tagX} vs ${tagY}`);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('makes a conditional GET answer as the original does', async () => {
    // The client revalidates body `before` (with the tag each version gave it) against body `now`.
    await fc.assert(
      fc.asyncProperty(body, body, fc.boolean(), async (before, now, unchanged) => {
        const current = unchanged ? before : now;
        const answer = async (etag) => {
          const validator = await tagOf(etag, before);
          const tag = await tagOf(etag, current);
          if (validator === undefined || tag === undefined) {
            return 'no tag';
          }
          return freshFn({ 'if-none-match': validator }, { etag: tag }) ? 304 : 200;
        };
        assert.equal(await answer(patched), await answer(original));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves streams of files to the original (stat-based) tag', async () => {
    const stream = Object.assign(Readable.from(['x']), { path: import.meta.filename });
    assert.equal(await tagOf(patched, stream), await tagOf(original, stream));
  });

  it('uses the CRC-32 of the bytes and their length', async () => {
    assert.equal(await tagOf(patched, 'hello'), 'W/"5-3610a686"');
    assert.equal(await tagOf(patched, Buffer.from('héllo')), 'W/"6-' + (await import('node:zlib')).crc32('héllo').toString(16) + '"');
  });
});
