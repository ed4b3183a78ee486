// A rolling deploy: build A serves, then build B replaces it, and a page of A (an open tab, a page a
// CDN still holds) asks B's origin for A's hashed files. With ASSET_ARCHIVE (a volume, or the shared
// tier's Redis) B answers them from the archive A published, as A did; bounded in age and size, past
// which a file of A is a plain 404, as is a hashed file no build had — never a page.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { nextBuild } from '../helpers/next-build.mjs';
import { DIST, ROOT, at, published, request, startOrigin } from '../helpers/origin.mjs';

const B = join(ROOT, 'test-results', `dist-next-build-${process.pid}`);
let renames;
let redis;
before(async () => {
  [renames, redis] = await Promise.all([nextBuild(DIST, B), startRedis()]);
});
after(async () => {
  rmSync(B, { recursive: true, force: true });
  await redis?.close();
});

/** Starts an origin and waits until it has published its build to the archive (`published`). */
async function publishing(dist, env) {
  const origin = await startOrigin({ dist, env });
  try {
    return { origin, archive: await published(origin) };
  } catch (error) {
    await origin.stop();
    throw error;
  }
}

/** Everything a page of build A asks for: its scripts, stylesheets and hints, by path. */
function filesOfPage(html, link = '') {
  const paths = new Set();
  // Relative to the page's base href: the locale's folder in a localized build.
  for (const [, path] of html.matchAll(/(?:src|href)="([\w.-]+\.(?:js|css))"/g))
    paths.add(at(`/${path}`));
  for (const [, path] of link.matchAll(/<(\/[\w./-]+\.(?:js|css))>/g)) paths.add(path);
  return [...paths];
}

const STORES = [
  ['a volume', () => ({ ASSET_ARCHIVE: mkdtempSync(join(tmpdir(), 'asset-archive-')) })],
  [
    'the shared tier’s Redis',
    () => ({
      REDIS_URL: redis.url,
      ASSET_ARCHIVE: 'redis',
      REDIS_KEY_PREFIX: `t${Math.random().toString(36).slice(2, 8)}`,
    }),
  ],
];

for (const [store, archiveEnv] of STORES) {
  describe(`old chunks kept on ${store}`, () => {
    it('answers a page of build A with A’s files from build B, and a file no build had with 404', async () => {
      const env = archiveEnv();
      const a = await publishing(DIST, env);
      const page = await request(a.origin.url, at('/products/5'));
      const product = await request(a.origin.url, at('/'));
      const wanted = [
        ...filesOfPage(page.text, page.headers.link),
        ...filesOfPage(product.text, product.headers.link),
      ].filter((path) => renames.has(path.slice(1)));
      assert.ok(wanted.length >= 3, `A's page asks for A's own files: ${wanted.join(', ')}`);
      await a.origin.stop();

      const b = await publishing(B, env);
      try {
        assert.equal(b.archive.builds, 2, JSON.stringify(b.archive));
        for (const path of wanted) {
          const own = readFileSync(join(DIST, 'browser', path));
          const res = await request(b.origin.url, path);
          assert.equal(res.status, 200, path);
          assert.ok(res.body.equals(own), path);
          assert.equal(res.headers['cache-control'], 'max-age=31536000, immutable');
          assert.match(res.headers.etag, /^"[^"]+"$/);
          const br = await request(b.origin.url, path, { headers: { 'accept-encoding': 'br' } });
          if (br.headers['content-encoding'] === 'br') {
            assert.ok(br.body.equals(readFileSync(join(DIST, 'browser', `${path}.br`))), path);
          }
          const again = await request(b.origin.url, path, {
            headers: { 'if-none-match': res.headers.etag },
          });
          assert.equal(again.status, 304, path);
        }
        // B's own files are B's.
        const [name, renamed] = [...renames][0];
        assert.equal((await request(b.origin.url, `/${renamed}`)).status, 200);
        assert.equal((await request(b.origin.url, `/${name}`)).status, 200);
        for (const gone of ['/chunk-ZZZZZZZZ.js', '/main-00000000.js', '/styles-AAAAAAAA.css'].map(
          at,
        )) {
          const res = await request(b.origin.url, gone);
          assert.equal(res.status, 404, gone);
          assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8', gone);
          assert.equal(res.text, 'Not Found');
        }
      } finally {
        await b.origin.stop();
      }
    });

    it('keeps no more than ASSET_ARCHIVE_MAX_BYTES: the oldest build goes first, never the newest', async () => {
      const env = archiveEnv();
      const a = await publishing(DIST, env);
      await a.origin.stop();
      // Room for one build: B's publication drops A's.
      const b = await publishing(B, { ...env, ASSET_ARCHIVE_MAX_BYTES: String(a.archive.bytes) });
      try {
        assert.equal(b.archive.builds, 1, JSON.stringify(b.archive));
        const [name, renamed] = [...renames][0];
        assert.equal((await request(b.origin.url, `/${name}`)).status, 404);
        assert.equal((await request(b.origin.url, `/${renamed}`)).status, 200);
      } finally {
        await b.origin.stop();
      }
    });

    it('keeps a build no longer than ASSET_ARCHIVE_MAX_AGE_S', async () => {
      const env = { ...archiveEnv(), ASSET_ARCHIVE_MAX_AGE_S: '1' };
      const a = await publishing(DIST, env);
      await a.origin.stop();
      await sleep(1100);
      const b = await publishing(B, env);
      try {
        assert.equal(b.archive.builds, 1, JSON.stringify(b.archive));
        assert.equal((await request(b.origin.url, `/${[...renames][0][0]}`)).status, 404);
      } finally {
        await b.origin.stop();
      }
    });
  });
}

describe('requests for hashed files no build has', () => {
  it('answer 404 or 400, never a page or a server error, whatever the path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'asset-archive-'));
    const { origin } = await publishing(DIST, { ASSET_ARCHIVE: dir });
    try {
      const segment = fc.stringMatching(/^[\w.%~-]{1,12}$/);
      const hash = fc.stringMatching(/^[\w-]{8}$/);
      const path = fc
        .tuple(
          fc.array(segment, { maxLength: 3 }),
          segment,
          hash,
          fc.constantFrom('js', 'mjs', 'css'),
        )
        .map(([dirs, name, h, ext]) => `/${[...dirs, `${name}-${h}.${ext}`].join('/')}`);
      await fc.assert(
        fc.asyncProperty(path, async (target) => {
          const res = await request(origin.url, target);
          assert.ok([404, 400].includes(res.status), `${target}: ${res.status}`);
          assert.doesNotMatch(res.headers['content-type'] ?? '', /html/, target);
        }),
        { numRuns: 100 },
      );
      for (const target of [
        '/../etc/passwd-12345678.js',
        '/%2e%2e/x-12345678.js',
        '/.x-12345678.js',
      ]) {
        const res = await request(origin.url, target);
        assert.ok([404, 400].includes(res.status), `${target}: ${res.status}`);
      }
    } finally {
      await origin.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
