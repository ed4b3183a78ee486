// patches/koa: `ctx.type = …` memoized. Same Content-Type as the original for any value, bounded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pristinePackage } from '../../scripts/lib/pristine-package.mjs';

const require = createRequire(import.meta.url);
const PatchedKoa = require('koa');
const OriginalKoa = require(pristinePackage('koa'));

function contextOf(Koa) {
  const req = new IncomingMessage(new Socket());
  return new Koa().createContext(req, new ServerResponse(req));
}

const typeValue = fc.oneof(
  fc.constantFrom(
    'html',
    'text',
    'json',
    'bin',
    'js',
    '.css',
    'png',
    'svg',
    'application/json',
    'text/html; charset=iso-8859-1',
    'image/x-icon',
    'nope',
    '',
  ),
  fc.stringMatching(/^\.?[a-z0-9]{1,6}$/),
  fc.string({ maxLength: 30 }),
);

describe('patch: koa Content-Type resolution memo', () => {
  it('sets the same Content-Type as the original for any value, first time and cached', () => {
    const patched = contextOf(PatchedKoa);
    const original = contextOf(OriginalKoa);
    fc.assert(
      fc.property(typeValue, (value) => {
        for (let i = 0; i < 2; i++) {
          patched.type = value;
          original.type = value;
          assert.equal(
            patched.response.get('Content-Type'),
            original.response.get('Content-Type'),
            `ctx.type = ${JSON.stringify(value)}`,
          );
          assert.equal(patched.type, original.type);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('types string and Buffer bodies as the original does', () => {
    for (const body of [
      '<p>hi</p>',
      '  <!doctype html>',
      'plain',
      Buffer.from('x'),
      { json: true },
    ]) {
      const patched = contextOf(PatchedKoa);
      const original = contextOf(OriginalKoa);
      patched.body = body;
      original.body = body;
      assert.equal(patched.response.get('Content-Type'), original.response.get('Content-Type'));
    }
  });

  it('keeps the memo bounded when types come from requests', () => {
    const script = `
      const Koa = require(${JSON.stringify(require.resolve('koa'))});
      const { IncomingMessage, ServerResponse } = require('node:http');
      const req = new IncomingMessage(new (require('node:net').Socket)());
      const ctx = new Koa().createContext(req, new ServerResponse(req));
      gc(); const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 200000; i++) ctx.type = 'x' + 'a'.repeat(150) + i;
      gc(); console.log(process.memoryUsage().heapUsed - before);`;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
      encoding: 'utf8',
      cwd: join(import.meta.dirname, '..'),
    });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(Number(child.stdout) < 8 * 1024 * 1024, `heap grew ${child.stdout} bytes`);
  });

  it('keeps no long type values: the memo is bounded in bytes, not only in entries', () => {
    // 300 values of 100 KB: a memo keyed by any string would hold 256 of them (25 MB).
    const script = `
      const Koa = require(${JSON.stringify(require.resolve('koa'))});
      const { IncomingMessage, ServerResponse } = require('node:http');
      const req = new IncomingMessage(new (require('node:net').Socket)());
      const ctx = new Koa().createContext(req, new ServerResponse(req));
      gc(); const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 300; i++) ctx.type = 'text/' + 'a'.repeat(100000) + i;
      gc(); console.log(process.memoryUsage().heapUsed - before);`;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
      encoding: 'utf8',
      cwd: join(import.meta.dirname, '..'),
    });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(Number(child.stdout) < 4 * 1024 * 1024, `heap grew ${child.stdout} bytes`);
  });
});
