// Reading a page's Cache-Groups header (RFC 9875: an RFC 8941 List of Strings) and its CDN aliases,
// on their own (Node runs the TypeScript sources directly, types stripped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  aliasHeaders,
  MAX_GROUP_LENGTH,
  MAX_GROUPS,
  parseCacheGroups,
} from '../../server/cache/cache-groups.ts';

/** An sf-string as a header carries it. */
const serialize = (group) => `"${group.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

describe('parseCacheGroups', () => {
  it('reads the strings of a list, unescaped, whatever their parameters and spacing', () => {
    assert.deepEqual(parseCacheGroups('"product-42", "catalog"'), ['product-42', 'catalog']);
    assert.deepEqual(parseCacheGroups('  "a";x=1;y="z",\t"b";flag , "c"  '), ['a', 'b', 'c']);
    assert.deepEqual(parseCacheGroups('"say \\"hi\\"", "back\\\\slash"'), [
      'say "hi"',
      'back\\slash',
    ]);
    assert.deepEqual(parseCacheGroups(''), []);
  });

  it('ignores the whole field when it is not a list of strings (RFC 9875 §2)', () => {
    for (const value of [
      'product-42',
      '"a", b',
      '("a" "b")',
      '"a",',
      '"a" "b"',
      '"unterminated',
      '"bad \\n escape"',
      '"é"',
      '"a";X=1',
      '?1',
    ]) {
      assert.equal(parseCacheGroups(value), undefined, value);
    }
  });

  it('keeps at most MAX_GROUPS groups and drops empty or over-long ones', () => {
    const many = Array.from({ length: MAX_GROUPS + 10 }, (_, i) => `"g${i}"`).join(', ');
    assert.equal(parseCacheGroups(many).length, MAX_GROUPS);
    const long = 'x'.repeat(MAX_GROUP_LENGTH + 1);
    assert.deepEqual(parseCacheGroups(`"", "${long}", "ok"`), ['ok']);
  });

  it('reads back every list of printable-ASCII groups it is given', () => {
    const group = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 1,
      maxLength: 40,
    });
    fc.assert(
      fc.property(fc.array(group, { maxLength: 10 }), (groups) => {
        assert.deepEqual(parseCacheGroups(groups.map(serialize).join(', ')), groups);
      }),
    );
  });
});

describe('aliasHeaders', () => {
  it('spells the groups for Fastly and Cloudflare, leaving out what a spelling cannot carry', () => {
    assert.deepEqual(aliasHeaders(['a', 'b c', 'd,e'], ['surrogate-key', 'cache-tag']), [
      'Surrogate-Key',
      'a d,e',
      'Cache-Tag',
      'a,b c',
    ]);
    assert.deepEqual(aliasHeaders(['a'], []), []);
  });
});
