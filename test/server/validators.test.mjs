// ETags are validators: they change whenever the bytes change (RFC 9110 §8.8.3). The origin's own
// (files indexed at startup, pages in the render cache: server/http/entity-tag.ts) and @koa/etag's (other
// rendered pages, unpatched) are strong digests. A 32-bit checksum was used before and collided.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { strongEtag } from '../../server/http/entity-tag.ts';
import { at, request, startOrigin } from '../helpers/origin.mjs';

const require = createRequire(import.meta.url);
const koaEtag = require('@koa/etag');

/** The ETag @koa/etag sets on a response with this body (undefined when it sets none). */
async function koaTagOf(body, options) {
  const headers = {};
  const ctx = {
    body,
    status: 200,
    response: {
      get: (name) => headers[name.toLowerCase()] ?? '',
      set etag(value) {
        headers.etag = value;
      },
    },
  };
  await koaEtag(options)(ctx, async () => {});
  return headers.etag;
}

const bytesOf = (value) =>
  Buffer.isBuffer(value)
    ? value
    : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const body = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()),
);

describe('validators', () => {
  // Same length, same CRC-32: under the old `W/"len-crc"` tag a client holding the first page
  // revalidated against the second and got 304 with stale content.
  const colliding = [
    Buffer.from('<p>item 66117b11f2ab</p>'),
    Buffer.from('<p>item cd9de46f726d</p>'),
  ];

  it('tells apart bodies a 32-bit checksum cannot', async () => {
    assert.equal(colliding[0].length, colliding[1].length);
    assert.equal(crc32(colliding[0]), crc32(colliding[1]), 'the pair collides under CRC-32');
    assert.notEqual(strongEtag(colliding[0]), strongEtag(colliding[1]));
    assert.notEqual(await koaTagOf(colliding[0]), await koaTagOf(colliding[1]));
  });

  it('gives equal bytes equal tags and different bytes different tags, strong', async () => {
    await fc.assert(
      fc.asyncProperty(body, body, async (x, y) => {
        const same = bytesOf(x).equals(bytesOf(y));
        assert.equal(strongEtag(bytesOf(x)) === strongEtag(bytesOf(y)), same);
        const [tagX, tagY] = [await koaTagOf(x), await koaTagOf(y)];
        if (tagX !== undefined && tagY !== undefined) {
          assert.equal(tagX === tagY, same, `${tagX} vs ${tagY}`);
          assert.match(tagX, /^"/, '@koa/etag tags strings, Buffers and JSON strong');
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps @koa/etag's options: weak when asked", async () => {
    assert.match(await koaTagOf('hello', { weak: true }), /^W\/"/);
    assert.match(await koaTagOf('hello', { weak: false }), /^"/);
  });
});

describe('validators over HTTP', () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin?.stop());

  it('sends strong ETags on files, prerendered, rendered and cached pages', async () => {
    for (const path of [
      '/',
      '/favicon.ico',
      '/products/61',
      '/products/61',
      '/async-work?http=0',
    ].map(at)) {
      const res = await request(origin.url, path);
      assert.match(res.headers.etag ?? '', /^"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/, path);
    }
    // @koa/etag tags 2xx answers only: the 404 page is sent whole every time.
    assert.equal((await request(origin.url, at('/no-such-page'))).headers.etag, undefined);
  });

  it("answers 200, never 304, to a client holding another page's tag", async () => {
    const pages = ['/', '/favicon.ico', '/products/62', '/products/63', '/async-work?http=0'].map(
      at,
    );
    const tags = [];
    for (const path of pages) tags.push((await request(origin.url, path)).headers.etag);
    for (const [i, path] of pages.entries()) {
      for (const [j, tag] of tags.entries()) {
        const res = await request(origin.url, path, { headers: { 'if-none-match': tag } });
        assert.equal(res.status, i === j ? 304 : 200, `${path} with the tag of ${pages[j]}`);
      }
    }
  });
});
