// Which variant runs when, within a round of the bench.

/**
 * The order of the variants in round r (from 0): a row of a Williams design. Round r starts with
 * variant r, so each goes first in turn, and no variant always follows the same one (with four or
 * more variants; the default seven follow three different ones in five rounds). Plain rotation kept
 * every variant behind the same neighbour (the origin behind the ceiling in 4 of 5 rounds), so
 * whatever a run leaves on the machine (a server finishing the renders in flight when its load
 * stopped, its GC) always hit the same one.
 */
export function roundOrder(list, r) {
  const n = list.length;
  // First row 0, 1, n-1, 2, n-2, …: the steps between neighbours differ along the row.
  const row = list.map((_, k) => (k === 0 ? 0 : k % 2 === 1 ? (k + 1) / 2 : n - k / 2));
  return row.map((index) => list[(index + r) % n]);
}
