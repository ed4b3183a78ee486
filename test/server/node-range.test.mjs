// The Node range check the origin makes at startup (server/process/node-range.ts): npm's range
// syntax as Angular's packages write it, against versions in and out of it, and the line it logs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  angularNodeRange,
  nodeRangeWarning,
  nodeSatisfies,
} from '../../server/process/node-range.ts';

const ANGULAR_22 = '^22.22.3 || ^24.15.0 || >=26.0.0';

describe('the Node range check', () => {
  it("reads Angular 22's range as npm does", () => {
    for (const [version, expected] of [
      ['v20.20.2', false],
      ['v22.22.2', false],
      ['v22.22.3', true],
      ['v22.99.0', true],
      ['v23.0.0', false],
      ['v24.14.9', false],
      ['v24.15.0', true],
      ['v24.21.0', true],
      ['v25.9.9', false],
      ['v26.0.0', true],
      ['v31.2.3', true],
      ['v24.21.0-nightly20261120', true],
    ])
      assert.equal(nodeSatisfies(version, ANGULAR_22), expected, version);
  });

  it('reads carets, tildes, comparisons, partial and exact versions', () => {
    for (const [range, version, expected] of [
      ['^0.2.3', 'v0.2.9', true],
      ['^0.2.3', 'v0.3.0', false],
      ['^0.0.3', 'v0.0.4', false],
      ['^1.2', 'v1.9.0', true],
      ['^1.2', 'v2.0.0', false],
      ['~1.2.3', 'v1.2.9', true],
      ['~1.2.3', 'v1.3.0', false],
      ['~1', 'v1.9.9', true],
      ['>=18 <20', 'v19.1.0', true],
      ['>=18 <20', 'v20.0.0', false],
      ['>= 18', 'v18.0.0', true],
      ['>1.2', 'v1.2.9', false],
      ['>1.2', 'v1.3.0', true],
      ['<=20', 'v20.9.9', true],
      ['<=20', 'v21.0.0', false],
      ['20.x', 'v20.1.0', true],
      ['20.x', 'v21.0.0', false],
      ['20.1.0', 'v20.1.0', true],
      ['20.1.0', 'v20.1.1', false],
      ['*', 'v4.0.0', true],
      ['', 'v4.0.0', true],
    ])
      assert.equal(nodeSatisfies(version, range), expected, `${version} in ${range}`);
  });

  it('claims nothing about a range or version it cannot read', () => {
    assert.equal(nodeSatisfies('v20.0.0', '18 - 20'), undefined);
    assert.equal(nodeSatisfies('v20.0.0', 'lts'), undefined);
    assert.equal(nodeSatisfies('twenty', '>=18'), undefined);
    assert.equal(nodeRangeWarning('v20.0.0', { range: 'lts', angular: '22.2.0' }), undefined);
  });

  it('says which Node is outside which range, in one line, and nothing inside it', () => {
    const declared = { range: ANGULAR_22, angular: '22.2.0' };
    const line = nodeRangeWarning('v20.20.2', declared);
    assert.match(
      line,
      /^Node v20\.20\.2 is outside the range Angular 22\.2\.0 declares \(\^22\.22\.3 \|\| \^24\.15\.0 \|\| >=26\.0\.0, @angular\/core's engines\.node\)/,
    );
    assert.doesNotMatch(line, /\n/);
    assert.equal(nodeRangeWarning('v24.21.0', declared), undefined);
  });

  it('finds the range the installed @angular/core declares', () => {
    const declared = angularNodeRange();
    assert.match(declared.range, /\^22\.22\.3/);
    assert.match(declared.angular, /^22\./);
    assert.equal(nodeSatisfies(process.version, declared.range), true, 'the tests run inside it');
  });
});
