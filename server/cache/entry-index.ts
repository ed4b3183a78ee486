// Which stored keys a revalidation names: the keys of each cache group and of each URL path, kept
// as entries come and go, so that revalidating touches the entries it names and nothing else. A
// revalidation used to scan every entry: a storm of them (a CMS publishing a thousand products)
// then cost a scan of the whole cache each.

/** Keys by group and by path, for the entries a store holds now. */
export class EntryIndex {
  readonly #byGroup = new Map<string, Set<string>>();
  readonly #byPath = new Map<string, Set<string>>();

  add(key: string, path: string | undefined, groups: readonly string[]): void {
    if (path !== undefined) {
      addTo(this.#byPath, path, key);
    }
    for (const group of groups) {
      addTo(this.#byGroup, group, key);
    }
  }

  remove(key: string, path: string | undefined, groups: readonly string[]): void {
    if (path !== undefined) {
      removeFrom(this.#byPath, path, key);
    }
    for (const group of groups) {
      removeFrom(this.#byGroup, group, key);
    }
  }

  /** The keys stored under any of `paths` or `groups` (a key may no longer be stored: check it). */
  keysOf(paths: Iterable<string>, groups: Iterable<string>): Set<string> {
    const keys = new Set<string>();
    for (const path of paths) {
      this.#byPath.get(path)?.forEach((key) => keys.add(key));
    }
    for (const group of groups) {
      this.#byGroup.get(group)?.forEach((key) => keys.add(key));
    }
    return keys;
  }

  clear(): void {
    this.#byGroup.clear();
    this.#byPath.clear();
  }
}

function addTo(index: Map<string, Set<string>>, name: string, key: string): void {
  let keys = index.get(name);
  if (keys === undefined) {
    keys = new Set();
    index.set(name, keys);
  }
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, name: string, key: string): void {
  const keys = index.get(name);
  if (keys !== undefined && keys.delete(key) && keys.size === 0) {
    index.delete(name);
  }
}
