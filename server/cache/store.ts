// The core of the origin's caches, whatever they keep (pages: render-cache/, what renders fetch:
// data-cache/), in three parts with a job each: the entries, bounded (entries.ts); the productions
// in flight, one per key (productions.ts); and when each path, group and key was last revalidated
// (revalidation-memory.ts). The store is where they meet: an entry a production made is stored
// stale, or not at all, when a revalidation of it came while it was made; a production that began
// before one is not joined; an entry from elsewhere older than one does not come back in. When to
// produce an entry and what to serve is tiered-cache.ts's.
import { Entries, type EntriesOptions, type EntriesStats } from './entries.ts';
import type { StoredEntry } from './entry.ts';
import { Productions, type ProductionsStats } from './productions.ts';
import { RevalidationMemory } from './revalidation-memory.ts';
import type { Revalidation, RevalidationMode } from './revalidation.ts';

export type { EntriesSettings as StoreSettings } from './entries.ts';
export type StoreStats = EntriesStats & ProductionsStats;

/**
 * What storing an entry came to: `deferred` when the cache is full and it is new (admission),
 * `too-large` for one larger than the whole cache, `revalidated` when a hard revalidation came
 * while it was produced (keep it nowhere).
 */
export type StoreOutcome = 'stored' | 'deferred' | 'too-large' | 'revalidated';

export class EntryStore<E extends StoredEntry> {
  /** The entries by key: look them up, peek, replace, adopt through here. */
  readonly entries: Entries<E>;
  /** The productions in flight by key. */
  readonly productions: Productions;
  readonly #revalidations = new RevalidationMemory();

  constructor(options: EntriesOptions<E>) {
    this.entries = new Entries(options);
    this.productions = new Productions({
      now: () => this.entries.now(),
      joinable: (key, startedAt) => this.#revalidationSince(key, startedAt) === undefined,
    });
  }

  get stats(): StoreStats {
    return { ...this.entries.stats, ...this.productions.stats };
  }

  /**
   * Keeps `entry` for `key` from now on (its storedAt is set here, by the cache's clock), if the
   * cache admits it. `producedSince`: when the production that made it began (by default, when the
   * key's production in flight began); a revalidation of it since then makes it stored stale
   * (soft), or not at all (`revalidated`: hard, so it must not be kept anywhere).
   */
  store(key: string, entry: E, producedSince = this.productions.startedAt(key)): StoreOutcome {
    entry.storedAt = this.entries.now();
    const missed =
      producedSince === undefined ? undefined : this.#revalidationSince(key, producedSince, entry);
    if (missed === 'hard') {
      // Made from before a hard revalidation: never served; the next request produces anew.
      this.entries.delete(key);
      return 'revalidated';
    }
    entry.revalidated = missed === 'soft';
    return this.entries.put(key, entry);
  }

  /**
   * Whether an entry stored elsewhere (the shared tier) predates a revalidation this process
   * applied that names it, and how: such an entry must not come back in (a revalidation applied
   * here before it reached Redis, or while another process stored an old entry there).
   */
  outdated(key: string, entry: E): RevalidationMode | undefined {
    return this.#revalidationSince(key, entry.storedAt, entry);
  }

  /**
   * On-demand revalidation: remembered (for what is being produced now), and applied to the
   * entries stored before `at` that it names. Returns how many it touched.
   */
  revalidate(revalidation: Revalidation): number {
    this.#revalidations.add(revalidation);
    return this.entries.revalidate(revalidation);
  }

  /** The keys the entries of `paths` were made from (a page's data). */
  sourcesOf(paths: readonly string[]): string[] {
    return this.entries.sourcesOf(paths);
  }

  /**
   * Brings a stale entry up to date in the background (productions.ts), the entry marked as one
   * whose refresh failed if it does: it stays usable up to its stale-if-error.
   */
  refresh<T>(
    key: string,
    produce: (flight: object) => Promise<T>,
    onFailure: (error: unknown) => void,
    failed?: (result: T) => unknown,
  ): void {
    this.productions.refresh(
      key,
      produce,
      (error) => {
        this.entries.refreshFailed(key);
        onFailure(error);
      },
      failed,
    );
  }

  /** Drops the entries of a path (or under it, for a path ending with `/`): purgeRenderCache. */
  purge(path: string): number {
    return this.entries.purge(path);
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * The strongest revalidation since `startedAt` that names `key` (by its path, its key, or a group
   * of `entry`: the one a production made, else what is stored for it now), if any: a production
   * that began before it may hold what it was about. With no entry to read groups from, any
   * revalidation by group counts.
   */
  #revalidationSince(key: string, startedAt: number, entry?: E): RevalidationMode | undefined {
    const known = entry ?? this.entries.held(key);
    return this.#revalidations.since(startedAt, key, this.entries.pathOf(key), known?.groups);
  }
}
