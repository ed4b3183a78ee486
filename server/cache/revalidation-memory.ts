// When each path, group and key was last revalidated: what a production that began before then may
// hold is out of date. A production finishing after a revalidation that names what it made must not
// be stored as new (nor joined by a request that came after it). Bounded: the names remembered are
// capped, and a name forgotten raises a floor that every production older than it is held to, so
// forgetting errs on the side of "revalidated" (a storm of a thousand groups a second cannot push a
// revalidation out before the renders it concerns end, as a list of the last few could).
import { LRUCache } from 'lru-cache';
import type { Revalidation, RevalidationMode } from './revalidation.ts';

/** Names (paths, groups, keys) whose last revalidation is remembered exactly. */
const NAMES = 10_000;

/** The last soft and hard revalidation of a name (ms, the store's clock); -Infinity: never. */
interface Last {
  soft: number;
  hard: number;
}

const NEVER = -Infinity;

export class RevalidationMemory {
  readonly #last: LRUCache<string, Last>;
  /** The latest revalidation of any name no longer remembered: older productions may be out of date. */
  readonly #floor: Last = { soft: NEVER, hard: NEVER };
  /** The latest revalidation by any group: a production whose groups are unknown yet may be named. */
  readonly #anyGroup: Last = { soft: NEVER, hard: NEVER };

  constructor() {
    this.#last = new LRUCache<string, Last>({
      max: NAMES,
      dispose: (last, _name, reason) => {
        if (reason === 'evict') {
          raise(this.#floor, last);
        }
      },
    });
  }

  /** Remembers a revalidation of its paths, groups and keys. */
  add({ paths, groups, keys = [], mode, at }: Revalidation): void {
    for (const path of paths) {
      this.#note(`p ${path}`, mode, at);
    }
    for (const group of groups) {
      this.#note(`g ${group}`, mode, at);
    }
    for (const key of keys) {
      this.#note(`k ${key}`, mode, at);
    }
    if (groups.length > 0) {
      raise(
        this.#anyGroup,
        mode === 'hard' ? { soft: NEVER, hard: at } : { soft: at, hard: NEVER },
      );
    }
  }

  /**
   * The strongest revalidation since `since` of the entry under `key` at `path` with `groups`
   * (undefined groups: not known yet, any group revalidation counts), if any.
   */
  since(
    since: number,
    key: string,
    path: string | undefined,
    groups: readonly string[] | undefined,
  ): RevalidationMode | undefined {
    const latest: Last = { ...this.#floor };
    raise(latest, this.#last.peek(`k ${key}`));
    if (path !== undefined) {
      raise(latest, this.#last.peek(`p ${path}`));
    }
    if (groups === undefined) {
      raise(latest, this.#anyGroup);
    } else {
      for (const group of groups) {
        raise(latest, this.#last.peek(`g ${group}`));
      }
    }
    return latest.hard >= since ? 'hard' : latest.soft >= since ? 'soft' : undefined;
  }

  #note(name: string, mode: RevalidationMode, at: number): void {
    const last = this.#last.get(name) ?? { soft: NEVER, hard: NEVER };
    last[mode] = Math.max(last[mode], at);
    this.#last.set(name, last);
  }
}

function raise(to: Last, from: Last | undefined): void {
  if (from !== undefined) {
    to.soft = Math.max(to.soft, from.soft);
    to.hard = Math.max(to.hard, from.hard);
  }
}
