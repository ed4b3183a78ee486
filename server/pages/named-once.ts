// Which names a warning has already said, per key (a route and a kind of input): so that each
// withheld cookie is named once, when it first appears, whoever the first visitor was. Visitors
// choose cookie names, so what is remembered is bounded: past `max` names for a key, new names are
// no longer said, and the first name turned away is reported once so the warning can say so.

/** What a warning names of what a read withheld, and whether that key just stopped naming. */
export interface Named {
  /** The names said for the first time for this key, now remembered. */
  fresh: string[];
  /** True once per key: the first time a name is turned away because the key is full. */
  full: boolean;
}

export class NamedOnce {
  readonly #max: number;
  readonly #said = new Map<string, Set<string>>();
  readonly #full = new Set<string>();

  constructor(maxPerKey: number) {
    this.#max = maxPerKey;
  }

  /** The names of `names` not yet said for `key`, remembered from now on while there is room. */
  take(key: string, names: readonly string[]): Named {
    let said = this.#said.get(key);
    if (said === undefined) {
      said = new Set();
      this.#said.set(key, said);
    }
    const fresh: string[] = [];
    let turnedAway = false;
    for (const name of names) {
      if (said.has(name)) {
        continue;
      }
      if (said.size >= this.#max) {
        turnedAway = true;
        continue;
      }
      said.add(name);
      fresh.push(name);
    }
    const full = turnedAway && !this.#full.has(key);
    if (full) {
      this.#full.add(key);
    }
    return { fresh, full };
  }
}
