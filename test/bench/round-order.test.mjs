import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roundOrder } from '../../bench/lib/round-order.mjs';

const variants = (n) => Array.from({ length: n }, (_, i) => `v${i}`);

test('every round runs each variant exactly once', () => {
  for (let n = 1; n <= 9; n++) {
    for (let r = 0; r < 2 * n + 3; r++) {
      assert.deepEqual(
        [...roundOrder(variants(n), r)].sort(),
        [...variants(n)].sort(),
        `n=${n} r=${r}`,
      );
    }
  }
});

test('over n rounds each variant goes first once', () => {
  for (let n = 1; n <= 9; n++) {
    const firsts = Array.from({ length: n }, (_, r) => roundOrder(variants(n), r)[0]);
    assert.deepEqual([...firsts].sort(), [...variants(n)].sort(), `n=${n}`);
  }
});

test('no variant follows the same one in every round where it follows one', () => {
  // With three variants and three rounds no order can do it while each goes first once.
  for (let n = 4; n <= 9; n++) {
    // The bench's default is 3 rounds: the property must hold from there on.
    for (let rounds = 3; rounds <= 2 * n; rounds++) {
      const before = new Map();
      for (let r = 0; r < rounds; r++) {
        const order = roundOrder(variants(n), r);
        order
          .slice(1)
          .forEach((name, i) => before.set(name, [...(before.get(name) ?? []), order[i]]));
      }
      for (const [name, predecessors] of before) {
        if (predecessors.length >= 2) {
          assert.ok(
            new Set(predecessors).size > 1,
            `n=${n} rounds=${rounds}: ${name} always after ${predecessors[0]}`,
          );
        }
      }
    }
  }
});

test('the default eight variants follow three different ones in five rounds', () => {
  const names = variants(8);
  for (const name of names) {
    const predecessors = new Set();
    for (let r = 0; r < 5; r++) {
      const order = roundOrder(names, r);
      const at = order.indexOf(name);
      if (at > 0) predecessors.add(order[at - 1]);
    }
    assert.ok(predecessors.size >= 3, `${name}: ${[...predecessors]}`);
  }
});

test('two variants swap places every round', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((r) => roundOrder(['a', 'b'], r)),
    [
      ['a', 'b'],
      ['b', 'a'],
      ['a', 'b'],
      ['b', 'a'],
    ],
  );
});
