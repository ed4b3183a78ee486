// A build with precompressed copies (`name.br`, `name.gz`, as scripts/compress-build.mjs writes them,
// here a chosen few): the origin sends the copy the client prefers (q-values honoured, brotli on a
// tie), marks every such answer `Vary: Accept-Encoding`, and keeps a separate validator per
// encoding, from memory and from disk alike.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { DIST, ROOT, at, request, siteDirs, startOrigin } from '../helpers/origin.mjs';

const dist = join(ROOT, 'test-results', `dist-precompressed-${process.pid}`);
const browser = siteDirs(dist).browser;
let page, mainJs, stylesCss;

before(() => {
  cpSync(DIST, dist, { recursive: true });
  // Only the copies written below: the build's own are removed.
  for (const name of readdirSync(browser).filter((name) => /\.(?:br|gz)$/.test(name))) {
    unlinkSync(join(browser, name));
  }
  const names = readdirSync(browser);
  mainJs = names.find((name) => /^main-[\w-]+\.js$/.test(name));
  stylesCss = names.find((name) => /^styles-[\w-]+\.css$/.test(name));
  page = readFileSync(join(browser, 'index.html'));
  // `/` has both copies, the main bundle only .br, the stylesheet only .gz, the favicon none.
  writeFileSync(join(browser, 'index.html.br'), brotliCompressSync(page));
  writeFileSync(join(browser, 'index.html.gz'), gzipSync(page));
  writeFileSync(
    join(browser, `${mainJs}.br`),
    brotliCompressSync(readFileSync(join(browser, mainJs))),
  );
  writeFileSync(join(browser, `${stylesCss}.gz`), gzipSync(readFileSync(join(browser, stylesCss))));
});
after(() => rmSync(dist, { recursive: true, force: true }));

for (const [where, env] of [
  ['from memory', {}],
  ['from disk (koa-static)', { STATIC_MEMORY_BYTES: '0' }],
]) {
  describe(`precompressed copies ${where}`, () => {
    let origin;
    before(async () => {
      origin = await startOrigin({ dist, env });
    });
    after(async () => {
      await origin?.stop();
    });
    const get = (path, acceptEncoding, headers = {}) =>
      request(origin.url, at(path), {
        headers: {
          ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
          ...headers,
        },
      });

    it('sends brotli when accepted, gzip when only that is, and the page itself otherwise', async () => {
      const br = await get('/', 'gzip, deflate, br');
      assert.equal(br.status, 200);
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(br.headers['cache-control'], 'no-cache');
      assert.equal(br.headers.vary, 'Accept-Encoding');
      assert.ok(brotliDecompressSync(br.body).equals(page));

      const gzip = await get('/', 'gzip');
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.ok(gunzipSync(gzip.body).equals(page));

      for (const acceptEncoding of [undefined, 'identity', 'deflate', 'br;q=0, gzip;q=0']) {
        const plain = await get('/', acceptEncoding);
        assert.equal(plain.status, 200, String(acceptEncoding));
        assert.equal(plain.headers['content-encoding'], undefined, String(acceptEncoding));
        assert.equal(plain.headers.vary, 'Accept-Encoding', String(acceptEncoding));
        assert.ok(plain.body.equals(page), String(acceptEncoding));
      }
    });

    it('follows the client’s preferences and what copies exist', async () => {
      assert.equal((await get('/', 'br;q=0, gzip')).headers['content-encoding'], 'gzip');
      assert.equal(
        (await get('/', 'br;q=0.5, gzip')).headers['content-encoding'],
        'gzip',
        'the q-values decide',
      );
      assert.equal((await get('/', 'gzip, br')).headers['content-encoding'], 'br', 'a tie: brotli');
      const js = await get(`/${mainJs}`, 'gzip, br');
      assert.equal(js.headers['content-encoding'], 'br');
      assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(
        js.headers['cache-control'],
        'max-age=31536000, immutable',
        'the policy of the file, not of its .br name',
      );
      assert.ok(brotliDecompressSync(js.body).equals(readFileSync(join(browser, mainJs))));
      const jsPlain = await get(`/${mainJs}`, 'gzip');
      assert.equal(jsPlain.headers['content-encoding'], undefined, 'there is no .gz of the bundle');
      assert.equal(jsPlain.headers.vary, 'Accept-Encoding');
      const css = await get(`/${stylesCss}`, 'br, gzip');
      assert.equal(css.headers['content-encoding'], 'gzip');
      assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
      const favicon = await get('/favicon.ico', 'br, gzip');
      assert.equal(favicon.headers['content-encoding'], undefined);
      assert.equal(favicon.headers.vary, undefined, 'a file without copies does not vary');
    });

    it('keeps one validator per encoding', async () => {
      const br = await get('/', 'br');
      const plain = await get('/', undefined);
      assert.ok(br.headers.etag && plain.headers.etag);
      assert.notEqual(br.headers.etag, plain.headers.etag);
      const revalidated = await get('/', 'br', { 'if-none-match': br.headers.etag });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.headers.etag, br.headers.etag);
      assert.equal(revalidated.headers.vary, 'Accept-Encoding');
      assert.equal(revalidated.body.length, 0);
      // The brotli copy's validator does not make the uncompressed page current.
      const other = await get('/', undefined, { 'if-none-match': br.headers.etag });
      assert.equal(other.status, 200);
      assert.ok(other.body.equals(page));
    });

    it('answers HEAD with the headers of the copy it would send', async () => {
      const head = await request(origin.url, at('/'), {
        method: 'HEAD',
        headers: { 'accept-encoding': 'br' },
      });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-encoding'], 'br');
      assert.equal(
        Number(head.headers['content-length']),
        readFileSync(join(browser, 'index.html.br')).length,
      );
      assert.equal(head.body.length, 0);
    });
  });
}
