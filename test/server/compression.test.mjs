// Every kind of answer in every content coding, over HTTP: the build's files and the prerendered
// page (compressed at build time), a page the render cache keeps (compressed once, when stored), a
// render nobody stores, the client-side shell and a rendered 404 (compressed as they go out) — each
// with `Vary: Accept-Encoding`, its own strong validator and its own 304, HEAD's Content-Length,
// identity when asked for or when nothing else is acceptable, and generated Accept-Encoding headers,
// malformed and enormous ones included, never answered with a 5xx. Over HTTP/1.1 and HTTP/2 alike.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import fc from 'fast-check';
import { PROTOCOLS, at, rawRequest, request, siteDirs, startOrigin } from '../helpers/origin.mjs';

const DECODE = { br: brotliDecompressSync, gzip: gunzipSync, zstd: zstdDecompressSync };
const mainJs = readdirSync(siteDirs().browser).find((name) => /^main-[\w-]+\.js$/.test(name));

/**
 * What each kind of answer is sent in, by the request's only accepted coding. A route with no
 * cache policy is rendered for each request alone.
 */
const KINDS = [
  { name: 'the prerendered page', path: '/', stored: true },
  { name: 'a file of the build', path: `/${mainJs}`, stored: true },
  { name: 'a page the render cache keeps', path: '/products/5', stored: true, cached: true },
  {
    name: 'a render nobody stores',
    path: '/injected',
  },
  { name: 'the client-side shell', path: '/dashboard' },
  { name: 'a rendered 404', path: '/no-such-page', status: 404, validated: false },
];

for (const protocol of PROTOCOLS) {
  describe(`over ${protocol}`, () => {
    let origin;
    before(async () => {
      origin = await startOrigin({ protocol });
      // Stored (and compressed) by its first request: every request below sees the same stored page.
      for (const kind of KINDS.filter(({ cached }) => cached)) {
        await request(origin.url, at(kind.path));
      }
    });
    after(async () => {
      await origin?.stop();
    });

    const get = (path, acceptEncoding, headers = {}, method = 'GET') =>
      request(origin.url, at(path), {
        method,
        headers: {
          ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
          ...headers,
        },
      });

    /** The body as sent, decoded. */
    const decoded = (response) => {
      const coding = response.headers['content-encoding'];
      return coding === undefined ? response.body : DECODE[coding](response.body);
    };

    for (const kind of KINDS) {
      describe(`${kind.name} (${kind.path})`, () => {
        const { status = 200, validated = true, headers = {} } = kind;
        // Stored codings are br and gzip: a client taking zstd alone gets the stored page as it is.
        const expected = kind.stored
          ? { br: 'br', gzip: 'gzip', zstd: undefined }
          : { br: 'br', gzip: 'gzip', zstd: 'zstd' };

        it('sends each coding asked for, or the page as it is, with the same content', async () => {
          const plain = await get(kind.path, undefined, headers);
          assert.equal(plain.status, status);
          assert.equal(
            plain.headers['content-encoding'],
            undefined,
            'nothing asked, nothing coded',
          );
          assert.equal(plain.headers.vary, 'Accept-Encoding');
          for (const [asked, coding] of Object.entries(expected)) {
            const coded = await get(kind.path, asked, headers);
            assert.equal(coded.status, status, asked);
            assert.equal(coded.headers['content-encoding'], coding, asked);
            assert.equal(coded.headers.vary, 'Accept-Encoding', asked);
            assert.equal(Number(coded.headers['content-length']), coded.body.length, asked);
            assert.ok(decoded(coded).equals(plain.body), `${asked}: the same content`);
            if (coding !== undefined) {
              assert.ok(coded.body.length < plain.body.length, `${asked}: smaller`);
            }
          }
          for (const asked of [
            'identity',
            'br;q=0, gzip;q=0, zstd;q=0',
            '*;q=0',
            'identity;q=0',
            '',
          ]) {
            const response = await get(kind.path, asked, headers);
            assert.equal(response.headers['content-encoding'], undefined, JSON.stringify(asked));
            assert.ok(response.body.equals(plain.body), JSON.stringify(asked));
          }
        });

        it('gives each coding its own strong validator and its own 304', async (t) => {
          if (!validated) {
            // Like @koa/etag: no validator on a 404, in any coding.
            for (const asked of [undefined, 'br', 'gzip', 'zstd']) {
              assert.equal((await get(kind.path, asked, headers)).headers.etag, undefined);
            }
            return;
          }
          const tags = new Map();
          for (const asked of [undefined, 'br', 'gzip', 'zstd']) {
            const { headers: sent } = await get(kind.path, asked, headers);
            assert.match(sent.etag, /^"[^"]+"$/, 'strong');
            tags.set(sent['content-encoding'], sent.etag);
          }
          assert.equal(new Set(tags.values()).size, tags.size, 'one tag per coding sent');
          for (const [coding, etag] of tags) {
            const asked = coding ?? 'identity';
            const revalidated = await get(kind.path, asked, { ...headers, 'if-none-match': etag });
            assert.equal(revalidated.status, 304, `${asked}: its own tag is current`);
            assert.equal(revalidated.headers.etag, etag);
            assert.equal(revalidated.headers.vary, 'Accept-Encoding', '304s vary too');
            assert.equal(revalidated.headers['content-encoding'], undefined);
            assert.equal(revalidated.body.length, 0);
            for (const [other, otherTag] of tags) {
              if (other !== coding) {
                const full = await get(kind.path, asked, { ...headers, 'if-none-match': otherTag });
                assert.equal(
                  full.status,
                  status,
                  `${asked} with ${other ?? 'identity'}'s tag: the page`,
                );
              }
            }
          }
          t.diagnostic(
            `tags: ${[...tags].map(([c, tag]) => `${c ?? 'identity'} ${tag}`).join(', ')}`,
          );
        });

        it('answers HEAD with the coded answer’s headers and no body', async () => {
          for (const asked of [undefined, 'br', 'gzip', 'zstd']) {
            const full = await get(kind.path, asked, headers);
            const head = await get(kind.path, asked, headers, 'HEAD');
            assert.equal(head.status, status);
            assert.equal(head.body.length, 0);
            assert.equal(head.headers['content-encoding'], full.headers['content-encoding']);
            assert.equal(head.headers['content-length'], full.headers['content-length']);
            assert.equal(head.headers.etag, full.headers.etag);
          }
        });
      });
    }

    describe('which coding a request gets', () => {
      it('honours q-values, then prefers the smaller coding', async () => {
        const cases = [
          ['br;q=0.5, gzip', 'gzip'],
          ['gzip, br', 'br'],
          ['gzip;q=0.9, br;q=0.8', 'gzip'],
          ['br;q=0.1, identity;q=0.5', undefined],
          ['*', 'br'],
          ['*;q=0.5, br;q=0', 'gzip'],
          ['x-gzip', 'gzip'],
          ['BR', 'br'],
          ['zstd', undefined],
        ];
        for (const [asked, coding] of cases) {
          assert.equal((await get('/', asked)).headers['content-encoding'], coding, asked);
        }
        // Compressed as they go out: zstd first, the cheapest to make.
        assert.equal(
          (await get('/dashboard', 'gzip, br, zstd')).headers['content-encoding'],
          'zstd',
        );
        assert.equal((await get('/dashboard', 'zstd;q=0.5, br')).headers['content-encoding'], 'br');
      });

      it('leaves types already compressed, and answers too small to gain, as they are', async () => {
        // favicon.ico is compressible (an uncompressed bitmap); a tiny JSON file is not worth it.
        const icon = await get('/favicon.ico', 'br');
        assert.equal(icon.headers['content-encoding'], 'br');
        const small = await get('/async-work.json', 'br, gzip');
        assert.equal(small.headers['content-encoding'], undefined);
        assert.equal(small.headers.vary, undefined);
        const notFound = await get('/missing.js', 'br, gzip');
        assert.equal(notFound.status, 404);
        assert.equal(notFound.headers['content-encoding'], undefined);
      });

      it('answers generated Accept-Encoding headers, malformed ones included, with a valid choice', async () => {
        const member = fc.oneof(
          fc.constantFrom('br', 'gzip', 'zstd', 'identity', '*', 'x-gzip', 'deflate', 'BR', 'Gzip'),
          fc.string({ maxLength: 12 }),
        );
        const weight = fc.oneof(
          fc.constant(''),
          fc.constantFrom(
            ';q=0',
            ';q=1',
            ';q=0.5',
            ';q=0.001',
            ';q=1.000',
            ';q=2',
            ';q=-1',
            ';q=',
            ';q=abc',
          ),
          fc.string({ maxLength: 8 }).map((text) => `;${text}`),
        );
        const separator = fc.constantFrom(',', ', ', ' ,\t', ',,');
        const header = fc
          .array(fc.tuple(member, weight, separator), { maxLength: 8 })
          .map((members) =>
            members.map(([name, q, sep], i) => (i === 0 ? '' : sep) + name + q).join(''),
          )
          // What an HTTP client can send in a header value.
          .map((value) => value.replace(/[^\t\x20-\x7e]/g, '').trim());
        await fc.assert(
          fc.asyncProperty(header, async (value) => {
            const response = await get('/', value);
            assert.equal(response.status, 200);
            const coding = response.headers['content-encoding'];
            assert.ok([undefined, 'br', 'gzip'].includes(coding), String(coding));
            assert.equal(Number(response.headers['content-length']), response.body.length);
            decoded(response);
          }),
          { numRuns: 60 },
        );
      });

      it('answers an enormous Accept-Encoding without a server error', async () => {
        const huge = Array.from({ length: 1000 }, (_, i) => `c${i};q=0.${i % 10}`).join(', ');
        const response = await get('/', `${huge}, br;q=0.3`);
        assert.equal(response.status, 200);
        assert.equal(response.headers['content-encoding'], 'br');
        if (protocol === 'h2') {
          return;
        }
        // Past Node's header limit the request is refused before the origin sees it: 431, never 5xx.
        const raw = await rawRequest(
          origin.port,
          `GET ${at('/')} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: ${'gzip, '.repeat(4000)}br\r\nConnection: close\r\n\r\n`,
        );
        assert.ok(raw.status === 200 || raw.status === 431, String(raw.status));
      });
    });

    describe('the render cache keeps each page compressed once', () => {
      it('stores the codings beside the page and counts them in its bytes', async () => {
        const path = '/products/7';
        await get(path, 'br');
        const before = JSON.parse((await request(origin.url, '/healthz')).text).renderCache;
        const br = await get(path, 'br');
        const gzip = await get(path, 'gzip');
        const plain = await get(path, undefined);
        assert.match(br.headers['cache-status'], /render-cache; hit/);
        assert.match(gzip.headers['cache-status'], /render-cache; hit/);
        const after = JSON.parse((await request(origin.url, '/healthz')).text).renderCache;
        assert.equal(after.entries, before.entries, 'hits store nothing');
        assert.ok(
          before.bytes >= plain.body.length + br.body.length + gzip.body.length,
          `the entry counts every coding: ${before.bytes} bytes`,
        );
      });
    });
  });
}

describe('CSP=strict: every nonced answer compressed, a fresh nonce in each', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { CSP: 'strict' } });
  });
  after(async () => {
    await origin?.stop();
  });

  /** The nonce of an answer's policy, which its page must carry. */
  const nonceOf = (res) => /'nonce-([\w-]{22})'/.exec(res.headers['content-security-policy'])[1];

  it('sends a kept page in gzip around its nonces: a valid member, this response’s nonce', async () => {
    for (const path of ['/', '/products/61', '/products/61']) {
      const res = await request(origin.url, at(path), { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-encoding'], 'gzip', path);
      assert.equal(Number(res.headers['content-length']), res.body.length, path);
      // gunzip checks the member's CRC and length: the trailer made for this nonce.
      const page = gunzipSync(res.body).toString();
      assert.ok(page.includes(`nonce="${nonceOf(res)}"`), path);
      assert.match(res.headers.etag, /^W\/".*-gzip"$/);
    }
    // Only gzip is made around the slots: a client that takes br alone gets the page as it is.
    const br = await request(origin.url, at('/'), { headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], undefined);
    assert.ok(br.text.includes(`nonce="${nonceOf(br)}"`));
  });

  it('compresses a nonced page rendered for one request as it goes out', async () => {
    const res = await request(origin.url, at('/injected'), {
      headers: { 'accept-encoding': 'zstd, gzip' },
    });
    assert.equal(res.headers['content-encoding'], 'zstd');
    assert.ok(
      zstdDecompressSync(res.body)
        .toString()
        .includes(`nonce="${nonceOf(res)}"`),
    );
  });
});
