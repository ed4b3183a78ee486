// patches/@angular/ssr: CommonEngine lists the build's index.html files once and keeps
// prerendered pages in memory. Same answers as the original for any URL, and no fs.access.
import '@angular/compiler';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CommonEngine as PatchedEngine } from '@angular/ssr/node';
import { DIST } from '../helpers/origin.mjs';
import { pristinePackage } from '../helpers/pristine.mjs';

const { CommonEngine: OriginalEngine } = await import(join(pristinePackage('@angular/ssr'), 'fesm2022/node.mjs'));

const publicPath = join(DIST, 'browser');
const documentFilePath = join(DIST, 'server/index.server.html');
const lookup = (engine, path) => engine.retrieveSSGPage({ publicPath, documentFilePath, url: `http://localhost${path}` });

const segment = fc.oneof(
  fc.constantFrom('', '.', '..', '%2e%2e', 'products', '1', 'index.html', 'dashboard', 'media', '..%2f', 'a b', '%00'),
  fc.stringMatching(/^[a-z0-9.%-]{1,8}$/),
);
const path = fc.oneof(
  fc.constantFrom('/', '/index.html', '//', '/products/1', '/dashboard', '/../', '/..', '/./', '/?x=1', '/#frag'),
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
    assert.ok((await lookup(patched, '/'))?.includes('ng-server-context="ssg"'), 'the prerendered / was not found');
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
