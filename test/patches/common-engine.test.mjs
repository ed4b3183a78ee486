// patches/@angular/ssr: CommonEngine lists the build's index.html files once and keeps
// prerendered pages in memory. Same answers as the original for any URL, and no fs.access.
import '@angular/compiler';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CommonEngine as PatchedEngine } from '@angular/ssr/node';
import { DIST } from '../helpers/origin.mjs';
import { pristinePackage } from '../../scripts/lib/pristine-package.mjs';

const { CommonEngine: OriginalEngine } = await import(
  join(pristinePackage('@angular/ssr'), 'fesm2022/node.mjs')
);

const publicPath = join(DIST, 'browser');
const documentFilePath = join(DIST, 'server/index.server.html');
const lookup = (engine, path) =>
  engine.retrieveSSGPage({ publicPath, documentFilePath, url: `http://localhost${path}` });

const segment = fc.oneof(
  fc.constantFrom(
    '',
    '.',
    '..',
    '%2e%2e',
    'products',
    '1',
    'index.html',
    'dashboard',
    'media',
    '..%2f',
    'a b',
    '%00',
  ),
  fc.stringMatching(/^[a-z0-9.%-]{1,8}$/),
);
const path = fc.oneof(
  fc.constantFrom(
    '/',
    '/index.html',
    '//',
    '/products/1',
    '/dashboard',
    '/../',
    '/..',
    '/./',
    '/?x=1',
    '/#frag',
  ),
  fc.array(segment, { maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
);

describe('patch: CommonEngine prerendered-page lookup', () => {
  it('answers every URL as the original does, on the real build, first time and cached', async () => {
    const [patched, original] = [new PatchedEngine(), new OriginalEngine()];
    await fc.assert(
      fc.asyncProperty(path, async (value) => {
        const expected = await lookup(original, value);
        assert.equal(await lookup(patched, value), expected, value);
        assert.equal(await lookup(patched, value), expected, `${value} (cached)`);
      }),
      { numRuns: 1500 },
    );
    assert.ok(
      (await lookup(patched, '/'))?.includes('ng-server-context="ssg"'),
      'the prerendered / was not found',
    );
  });

  it('costs no fs call for a URL that is not prerendered, and reads a prerendered page once', async () => {
    const engine = new PatchedEngine();
    await lookup(engine, '/'); // lists the build once
    const calls = { access: 0, readFile: 0 };
    const saved = { access: fs.promises.access, readFile: fs.promises.readFile };
    fs.promises.access = (...args) => (calls.access++, saved.access(...args));
    fs.promises.readFile = (...args) => (calls.readFile++, saved.readFile(...args));
    try {
      for (let i = 0; i < 200; i++) {
        assert.equal(await lookup(engine, `/products/${i}`), undefined);
        assert.ok(await lookup(engine, '/'));
      }
    } finally {
      Object.assign(fs.promises, saved);
    }
    assert.deepEqual(calls, { access: 0, readFile: 0 });
  });
});

/** A publicPath of prerendered pages (the SSG marker plus padding), `sizes` in bytes, by path. */
function prerenderedPages(sizes, filler = 'x') {
  const root = fs.mkdtempSync(join(tmpdir(), 'ssg-pages-'));
  const pages = new Map();
  for (const [name, size] of Object.entries(sizes)) {
    const head = '<html ng-server-context="ssg"><body>';
    const unit = Buffer.byteLength(filler);
    const content = head + filler.repeat(Math.max(0, Math.floor((size - head.length) / unit)));
    fs.mkdirSync(join(root, name), { recursive: true });
    fs.writeFileSync(join(root, name, 'index.html'), content);
    pages.set(`/${name}`, content);
  }
  fs.writeFileSync(join(root, 'document.html'), '<html><body><app-root></app-root></body></html>');
  return {
    root,
    pages,
    lookup: (engine, path) =>
      engine.retrieveSSGPage({
        publicPath: root,
        documentFilePath: join(root, 'document.html'),
        url: `http://localhost${path}`,
      }),
  };
}

const MiB = 1024 * 1024;
const MAX_BYTES = 32 * MiB;

describe('patch: CommonEngine prerendered-page cache, bounded and shared', () => {
  it('reads and counts a page once however many first requests ask for it at once', async () => {
    const { root, pages, lookup: find } = prerenderedPages({ big: MiB });
    try {
      const engine = new PatchedEngine();
      let reads = 0;
      const readFile = fs.promises.readFile;
      fs.promises.readFile = (...args) => (reads++, readFile(...args));
      let answers;
      try {
        answers = await Promise.all(Array.from({ length: 60 }, () => find(engine, '/big')));
      } finally {
        fs.promises.readFile = readFile;
      }
      assert.ok(answers.every((answer) => answer === pages.get('/big')));
      assert.equal(reads, 1);
      assert.equal(engine.ssgPageCache.size, 1);
      assert.equal(engine.ssgPageCacheBytes, Buffer.byteLength(pages.get('/big')));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('stays within its bytes for pages of growing size, past the bound, and never throws', async () => {
    const sizes = {
      a: MiB,
      b: 4 * MiB,
      c: 12 * MiB,
      d: 20 * MiB,
      e: 31 * MiB,
      f: 33 * MiB,
      g: 2 * MiB,
    };
    const { root, pages, lookup: find } = prerenderedPages(sizes);
    try {
      const engine = new PatchedEngine();
      for (const round of [1, 2]) {
        for (const path of pages.keys()) {
          // Concurrent first requests for each, then misses for the next, larger one.
          const answers = await Promise.all([
            find(engine, path),
            find(engine, path),
            find(engine, path),
          ]);
          assert.ok(
            answers.every((answer) => answer === pages.get(path)),
            `${path}, round ${round}`,
          );
          const held = [...engine.ssgPageCache.values()].reduce(
            (sum, entry) => sum + entry.bytes,
            0,
          );
          assert.equal(engine.ssgPageCacheBytes, held, 'the count matches what is held');
          assert.ok(
            engine.ssgPageCacheBytes <= MAX_BYTES,
            `${engine.ssgPageCacheBytes} bytes held`,
          );
        }
      }
      assert.ok(
        !engine.ssgPageCache.has(join(root, 'f', 'index.html')),
        'a page over the whole bound is served, not kept',
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('counts bytes, not UTF-16 units', async () => {
    const { root, pages, lookup: find } = prerenderedPages({ accents: 300_000 }, 'é');
    try {
      const engine = new PatchedEngine();
      assert.equal(await find(engine, '/accents'), pages.get('/accents'));
      assert.equal(engine.ssgPageCacheBytes, Buffer.byteLength(pages.get('/accents')));
      assert.notEqual(engine.ssgPageCacheBytes, pages.get('/accents').length);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('renders a page deleted after startup, as the original does', async () => {
    const { root, lookup: find } = prerenderedPages({ kept: 1000, gone: 1000 });
    try {
      const engine = new PatchedEngine();
      await find(engine, '/kept'); // the build is listed, /gone with it
      fs.rmSync(join(root, 'gone'), { recursive: true });
      assert.equal(await find(engine, '/gone'), await find(new OriginalEngine(), '/gone'));
      assert.equal(await find(engine, '/gone'), undefined);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('keeps its count right under any order of requests (model check)', async () => {
    const sizes = {
      p0: 9 * MiB,
      p1: 7 * MiB,
      p2: 5 * MiB,
      p3: 3 * MiB,
      p4: 11 * MiB,
      p5: 40 * MiB,
    };
    const { root, pages, lookup: find } = prerenderedPages(sizes);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(fc.constantFrom(...pages.keys()), { minLength: 1, maxLength: 3 }), {
            minLength: 1,
            maxLength: 12,
          }),
          async (batches) => {
            const engine = new PatchedEngine();
            for (const batch of batches) {
              const answers = await Promise.all(batch.map((path) => find(engine, path)));
              answers.forEach((answer, i) => assert.equal(answer, pages.get(batch[i])));
              const held = [...engine.ssgPageCache.values()].reduce(
                (sum, entry) => sum + entry.bytes,
                0,
              );
              assert.equal(engine.ssgPageCacheBytes, held);
              assert.ok(held <= MAX_BYTES);
            }
          },
        ),
        { numRuns: 15 },
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
