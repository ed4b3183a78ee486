// The one writer (server/http/answer.ts) with a streamed body, over real HTTP on loopback: each
// piece reaches the client as it is made, compressed in the coding the request prefers and flushed
// piece by piece, with no length; HEAD and a 304 read nothing of it. What a page with personal parts
// needs (its shared bytes out before its parts are made), and what a file koa-static reads gets.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { answer, writeAnswer } from '../../server/http/answer.ts';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';

/** A stream of `pieces`, each made only when `release` is called, and told when the writer asked for it. */
function heldPieces(pieces) {
  const waiting = [];
  let next = 0;
  const stream = new Readable({
    read() {
      if (next === pieces.length) {
        this.push(null);
        return;
      }
      const piece = pieces[next++];
      waiting.push(() => this.push(Buffer.from(piece)));
    },
  });
  return { stream, release: () => waiting.shift()?.() };
}

/** What a client receives of `path`, piece by piece as they arrive (raw bytes, not decoded). */
function receive(url, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const arrived = [];
    const req = httpRequest(url, { method, headers }, (res) => {
      res.on('data', (chunk) => arrived.push(chunk));
      resolve({ res, arrived, done: new Promise((ended) => res.on('end', ended)) });
    });
    req.on('error', reject);
    req.end();
  });
}

const decode = {
  gzip: gunzipSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
  identity: (bytes) => bytes,
};

describe('a streamed answer through the one writer', () => {
  for (const coding of ['identity', 'gzip', 'br', 'zstd']) {
    it(`sends each piece as it is made (${coding}), flushed, with no length`, async () => {
      const pieces = [
        '<html><body><p>the shared part, long enough to matter</p>',
        '<p>Hi, Alice</p>',
        '</body></html>',
      ];
      const held = heldPieces(pieces);
      const server = await serveOnLoopback((req, res) =>
        writeAnswer(
          req,
          res,
          answer(200, ['Content-Type', 'text/html; charset=utf-8'], Buffer.alloc(0), {
            stream: held.stream,
            compress: true,
          }),
        ),
      );
      try {
        const { res, arrived, done } = await receive(
          server.url,
          coding === 'identity' ? {} : { 'accept-encoding': coding },
        );
        assert.equal(res.headers['content-length'], undefined);
        assert.equal(res.headers['content-encoding'], coding === 'identity' ? undefined : coding);
        for (let i = 0; i < pieces.length; i++) {
          const before = Buffer.concat(arrived).length;
          held.release();
          // The piece arrives before the next is made: the client holds what was flushed.
          for (let tries = 0; Buffer.concat(arrived).length === before && tries < 100; tries++) {
            await sleep(10);
          }
          assert.ok(Buffer.concat(arrived).length > before, `piece ${i} arrived on its own`);
        }
        await done;
        assert.equal(decode[coding](Buffer.concat(arrived)).toString(), pieces.join(''));
      } finally {
        await server.close();
      }
    });
  }

  it('HEAD and a 304 read nothing of the stream', async () => {
    let streams = [];
    const server = await serveOnLoopback((req, res) => {
      const stream = new Readable({ read() {} });
      streams.push(stream);
      writeAnswer(
        req,
        res,
        answer(200, ['Content-Type', 'text/plain', 'ETag', '"s"'], Buffer.alloc(0), {
          stream,
          validators: { etag: '"s"' },
          compress: false,
        }),
      );
    });
    try {
      const head = await receive(server.url, {}, 'HEAD');
      await head.done;
      assert.equal(head.res.statusCode, 200);
      const notModified = await receive(server.url, { 'if-none-match': '"s"' });
      await notModified.done;
      assert.equal(notModified.res.statusCode, 304);
      assert.deepEqual(
        streams.map((stream) => stream.destroyed),
        [true, true],
      );
    } finally {
      await server.close();
    }
  });
});
