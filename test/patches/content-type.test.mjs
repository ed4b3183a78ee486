// patches/content-type: parse() memoized. Same results as the original for any input, a fresh
// object per call, and a bounded memo.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pristinePackage } from '../../scripts/lib/pristine-package.mjs';

const require = createRequire(import.meta.url);
const patched = require('content-type');
const original = require(pristinePackage('content-type'));

const outcome = (fn) => {
  try {
    const { type, parameters } = fn();
    return { type, parameters: { ...parameters } };
  } catch (error) {
    return { error: `${error.constructor.name}: ${error.message}` };
  }
};

const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
const mediaType = fc.tuple(token, token).map(([a, b]) => `${a}/${b}`);
const paramValue = fc.oneof(
  token,
  fc.string({ maxLength: 12 }).map((s) => `"${s.replace(/["\\]/g, '\\$&')}"`),
);
const header = fc.oneof(
  fc
    .tuple(
      mediaType,
      fc.array(fc.tuple(token, paramValue), { maxLength: 4 }),
      fc.constantFrom(';', '; ', ' ;  '),
    )
    .map(([type, params, separator]) =>
      [type, ...params.map(([k, v]) => `${k}=${v}`)].join(separator),
    ),
  fc.constantFrom(
    'text/html; charset=utf-8',
    'application/json',
    'TEXT/HTML;Charset="UTF-8"',
    'text/html;',
    'text/',
    '',
  ),
  fc.string({ maxLength: 40 }),
);

describe('patch: content-type parse() memo', () => {
  it('returns what the original returns, or throws what it throws, for any header (also when cached)', () => {
    fc.assert(
      fc.property(header, (value) => {
        const expected = outcome(() => original.parse(value));
        assert.deepEqual(
          outcome(() => patched.parse(value)),
          expected,
        );
        assert.deepEqual(
          outcome(() => patched.parse(value)),
          expected,
          'second (cached) call differs',
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('parses req-like and res-like objects the same way', () => {
    const req = { headers: { 'content-type': 'text/html; charset=utf-8' } };
    const res = { getHeader: () => 'application/json; q=1' };
    for (const input of [req, res, req, res]) {
      assert.deepEqual(
        outcome(() => patched.parse(input)),
        outcome(() => original.parse(input)),
      );
    }
  });

  it('hands every caller its own object', () => {
    const first = patched.parse('text/html; charset=utf-8');
    first.type = 'mutated/type';
    first.parameters.charset = 'mutated';
    const second = patched.parse('text/html; charset=utf-8');
    assert.equal(second.type, 'text/html');
    assert.equal(second.parameters.charset, 'utf-8');
    assert.notEqual(first, second);
  });

  it('keeps the memo bounded under a flood of unique headers', () => {
    // In a child with --expose-gc: 200,000 unique 200-byte headers would keep ~80 MB if memoized.
    const script = `
      const { parse } = require(${JSON.stringify(require.resolve('content-type'))});
      gc(); const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 200000; i++) parse('text/html; x=' + 'a'.repeat(180) + i);
      gc(); console.log(process.memoryUsage().heapUsed - before);`;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
      encoding: 'utf8',
      cwd: join(import.meta.dirname, '..'),
    });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(Number(child.stdout) < 8 * 1024 * 1024, `heap grew ${child.stdout} bytes`);
  });
});
