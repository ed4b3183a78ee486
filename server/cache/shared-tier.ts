// A cache's second tier: one store on Redis (or Valkey) for every process of every replica,
// through the origin's Redis link (redis/link.ts), whose bounds and breaker every call here goes
// through: a request waits on Redis at most REDIS_TIMEOUT_MS, usually not at all. What an entry
// holds is its user's (an EntryCodec: render-cache/shared-entry.ts for pages); the tier keeps when it
// was stored, its revalidation, its groups and path for revalidation, and the production lock.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { LinkState, Outcome, RedisLink, SkipReason } from '../redis/link.ts';
import type { Revalidation } from './revalidation.ts';
import { lifetimeMs, type StoredEntry } from './entry.ts';

export type SharedLookup<E> = { found: E } | { found: undefined } | { skipped: SkipReason };

/** A production this process holds the lock for; release it once the entry is stored (or not). */
export interface Lease {
  release(): Promise<void>;
}
export type LockResult = { lease: Lease } | { held: true } | { skipped: SkipReason };

export interface SharedTierStats {
  state: LinkState;
  hits: number;
  stale: number;
  misses: number;
  stores: number;
  /** Entries over their bound (SHARED_CACHE_MAX_ENTRY_BYTES), kept by their process only. */
  tooLarge: number;
  /** Waits for another process's production of the same entry (instead of producing it too). */
  lockWaits: number;
  /** Requests that went on without Redis, by reason. */
  skipped: Record<SkipReason, number>;
  /** Entries Redis held that this process could not read (another layout, a corrupt value). */
  unreadable: number;
}

/** What the shared tier's settings are (config.ts reads them from the environment). */
export interface SharedTierSettings {
  /** Every key starts with this (REDIS_KEY_PREFIX): several origins can share one Redis. */
  keyPrefix: string;
  /** Entries larger than this stay in their process's cache only (SHARED_CACHE_MAX_ENTRY_BYTES). */
  maxEntryBytes: number;
}

/** How a cache's user stores its entries in the tier's hash fields, and reads them back. */
export interface EntryCodec<E extends StoredEntry> {
  /** The fields it reads back, in the order read() gets their values. */
  readonly fields: readonly string[];
  /** The fields of an entry, and the bytes they count against maxEntryBytes. */
  write(entry: E): { fields: Record<string, string | Buffer>; bytes: number };
  /**
   * The entry of the values read (null where a field is absent), or undefined when it cannot be
   * one here (another layout, a field of the wrong shape). `revalidated`: soft-revalidated since.
   */
  read(values: (Buffer | null)[], revalidated: boolean): Promise<E | undefined>;
}

export interface SharedTierOptions<E extends StoredEntry> {
  link: RedisLink;
  /** Where its keys live (`<prefix>:{<build>-<csp>}` for pages): one hash-tag per namespace. */
  namespace: string;
  codec: EntryCodec<E>;
  maxEntryBytes: number;
  /** The URL path of a key, indexed for revalidation by path; undefined: keys have none. */
  pathOf?: (key: string) => string | undefined;
  log: Logger;
}

/** A stored list of sources, if it is one (Redis may hold anything under a key). */
function sourceList(json: string): string[] | undefined {
  try {
    const list: unknown = JSON.parse(json);
    return Array.isArray(list) && list.every((item) => typeof item === 'string') ? list : undefined;
  } catch {
    return undefined;
  }
}

/** A lock outlives its holder by at most this; the holder renews it while it produces. */
const LEASE_MS = 3000;
/** Revalidation is an operator's call, not a request: it may wait longer than a lookup. */
export const REVALIDATION_TIMEOUT_MS = 5000;

/**
 * Touches the first ARGV[3] keys, entries, if stored before ARGV[2]: soft marks them revalidated,
 * hard deletes them. The keys after them are the markers of the names revalidated (paths, groups,
 * keys): each remembers the latest revalidation of its name by mode, for ARGV[4] ms, so that an entry
 * made before it and written after it (PUT_SCRIPT) is not stored as new.
 */
const REVALIDATE_SCRIPT = `
local mode, at, entries = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local touched = 0
for i = 1, entries do
  local storedAt = redis.call('HGET', KEYS[i], 't')
  if storedAt and tonumber(storedAt) < at then
    if mode == 'hard' then redis.call('DEL', KEYS[i]) else redis.call('HSET', KEYS[i], 'r', ARGV[2]) end
    touched = touched + 1
  end
end
for i = entries + 1, #KEYS do
  local last = tonumber(redis.call('HGET', KEYS[i], mode))
  if not last or last < at then redis.call('HSET', KEYS[i], mode, ARGV[2]) end
  redis.call('PEXPIRE', KEYS[i], ARGV[4])
end
return touched`;
/**
 * Stores an entry (KEYS[1]) made at ARGV[1], unless a revalidation of one of its names (the markers,
 * after its ARGV[3] indexes in KEYS) came since: hard, it is not stored (returns 0); soft, it is
 * stored stale. ARGV: made at, ttl ms, index count, the channel and key to announce it on, '1' when
 * stored stale anyway, its sources ('' for none), then its fields and values.
 */
const PUT_SCRIPT = `
local storedAt, indexes = tonumber(ARGV[1]), tonumber(ARGV[3])
local stale = ARGV[6] == '1'
for i = 2 + indexes, #KEYS do
  local mark = redis.call('HMGET', KEYS[i], 'hard', 'soft')
  local hard, soft = tonumber(mark[1]), tonumber(mark[2])
  if hard and hard >= storedAt then return 0 end
  if soft and soft >= storedAt then stale = true end
end
local fields = {'t', ARGV[1]}
if stale then fields[#fields + 1] = 'r'; fields[#fields + 1] = ARGV[1] end
if ARGV[7] ~= '' then fields[#fields + 1] = 's'; fields[#fields + 1] = ARGV[7] end
for i = 8, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
for i = 2, 1 + indexes do
  redis.call('SADD', KEYS[i], KEYS[1])
  redis.call('PEXPIRE', KEYS[i], ARGV[2], 'NX')
  redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;
/**
 * How long Redis remembers a name's last revalidation for the writes still on their way: far longer
 * than an entry takes from being made to being written (its compression, one Redis call).
 */
export const REVALIDATION_MARKER_MS = 60_000;
/** Renews (ARGV[2] = ms) or releases (no ARGV[2]) a lock only while it is still ours. */
const LEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])`;

/**
 * Entries in Redis under `<namespace>:…` (one hash-tag per namespace, so a Redis Cluster keeps its
 * keys on one shard, as the scripts need): `entry:<key>` a hash (the codec's fields, t: stored at,
 * r: soft-revalidated at, s: the keys it was made from), `group:<group>` and `path:<path>` sets of entry keys for revalidation,
 * `lock:<key>` the production lock. Productions are announced on `<namespace>:produced`.
 */
export class SharedTier<E extends StoredEntry> {
  readonly #link: RedisLink;
  readonly #namespace: string;
  readonly #options: SharedTierOptions<E>;
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;
  readonly #stats = {
    hits: 0,
    stale: 0,
    misses: 0,
    stores: 0,
    tooLarge: 0,
    lockWaits: 0,
    unreadable: 0,
  };

  constructor(options: SharedTierOptions<E>) {
    this.#options = options;
    this.#link = options.link;
    this.#namespace = options.namespace;
    this.#link.subscribe(`${this.#namespace}:produced`, (key) => this.#wake(key));
  }

  get stats(): SharedTierStats {
    return { state: this.#link.state, ...this.#stats, skipped: this.#link.skipped };
  }

  /** The entry stored for `key`, if Redis answers in time. */
  async get(key: string): Promise<SharedLookup<E>> {
    const { codec } = this.#options;
    const outcome = await this.#link.call('tier.get', (client) =>
      client.hmGet(this.#entryKey(key), ['r', 's', ...codec.fields]),
    );
    if (!outcome.ok) {
      return { skipped: outcome.reason };
    }
    const [revalidatedAt, sources, ...values] = outcome.value;
    if (values.every((value) => value === null)) {
      this.#stats.misses++;
      return { found: undefined };
    }
    const entry = await codec.read(values, revalidatedAt !== null);
    if (entry === undefined) {
      this.#stats.unreadable++;
      this.#stats.misses++;
      return { found: undefined };
    }
    const made = sources === null ? undefined : sourceList(sources.toString());
    if (made !== undefined) {
      entry.sources = made;
    }
    return { found: entry };
  }

  /** Counts what a lookup's entry turned out to be worth (the caller judges its freshness). */
  countHit(stale: boolean): void {
    this.#stats[stale ? 'stale' : 'hits']++;
  }

  /**
   * Stores an entry for every process, with its groups and path indexed for revalidation, and tells
   * the processes waiting for it. Returns what happened.
   */
  async put(key: string, entry: E): Promise<'stored' | 'too-large' | 'revalidated' | SkipReason> {
    const { fields, bytes } = this.#options.codec.write(entry);
    // The bound is on everything stored for the entry (a page: its body and every coding of it).
    if (bytes > this.#options.maxEntryBytes) {
      this.#stats.tooLarge++;
      return 'too-large';
    }
    const ttl = lifetimeMs(entry.policy) - Math.max(0, Date.now() - entry.storedAt);
    if (ttl <= 0) {
      return 'stored';
    }
    const path = this.#options.pathOf?.(key);
    const paths = path === undefined ? [] : [path];
    const indexes = [
      ...paths.map((p) => `${this.#namespace}:path:${p}`),
      ...entry.groups.map((group) => `${this.#namespace}:group:${group}`),
    ];
    const args: (string | Buffer)[] = [
      String(entry.storedAt),
      String(ttl),
      String(indexes.length),
      `${this.#namespace}:produced`,
      key,
      // Stored already stale: a soft revalidation came while it was produced.
      entry.revalidated ? '1' : '',
      // What it was made from, for revalidation by path from any process (sourcesOf).
      entry.sources?.length ? JSON.stringify(entry.sources) : '',
    ];
    for (const [name, value] of Object.entries(fields)) {
      args.push(name, value);
    }
    const outcome = await this.#link.call('tier.put', (client) =>
      client.eval(PUT_SCRIPT, {
        keys: [
          this.#entryKey(key),
          ...indexes,
          ...this.#markers({ paths, groups: entry.groups, keys: [key] }),
        ],
        arguments: args,
      }),
    );
    if (!outcome.ok) {
      return outcome.reason;
    }
    if (Number(outcome.value) === 0) {
      return 'revalidated';
    }
    this.#stats.stores++;
    return 'stored';
  }

  /**
   * Takes the production lock for `key`: `lease` when this process is to produce it, `held` while
   * another one does (wait with `producedElsewhere`, then look again).
   */
  async lock(key: string): Promise<LockResult> {
    const lockKey = `${this.#namespace}:lock:${key}`;
    const token = randomBytes(16).toString('base64url');
    const outcome = await this.#link.call('tier.lock', (client) =>
      client.set(lockKey, token, { condition: 'NX', expiration: { type: 'PX', value: LEASE_MS } }),
    );
    if (!outcome.ok) {
      return { skipped: outcome.reason };
    }
    if (outcome.value === null) {
      this.#stats.lockWaits++;
      return { held: true };
    }
    // Renewed while the production runs: a holder that dies (or hangs) loses the lock within LEASE_MS.
    const renew = setInterval(() => {
      void this.#link.call('tier.lease', (client) =>
        client.eval(LEASE_SCRIPT, { keys: [lockKey], arguments: [token, String(LEASE_MS)] }),
      );
    }, LEASE_MS / 3);
    renew.unref();
    return {
      lease: {
        release: async () => {
          clearInterval(renew);
          await this.#link.call('tier.release', (client) =>
            client
              .multi()
              .eval(LEASE_SCRIPT, { keys: [lockKey], arguments: [token] })
              // Waiters look again at once, stored or not (an entry that may not be shared, say).
              .publish(`${this.#namespace}:produced`, key)
              .exec(),
          );
        },
      },
    };
  }

  /**
   * Resolves when another process announces a production of `key`, after `maxWaitMs` (the holder may
   * have died: the caller looks again and may take the lock), or when `signal` aborts.
   */
  producedElsewhere(key: string, maxWaitMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.#waiters.get(key);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiters.set(key, waiters);
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const set = this.#waiters.get(key);
        set?.delete(done);
        if (set?.size === 0) {
          this.#waiters.delete(key);
        }
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      signal?.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }

  /**
   * Applies a revalidation to the entries of its paths, groups and keys stored before `at`.
   * Returns how many it touched.
   */
  async revalidate(revalidation: Revalidation): Promise<Outcome<number>> {
    const members = await this.#members(revalidation.paths, revalidation.groups);
    if (!members.ok) {
      return members;
    }
    const entries = [
      ...new Set([
        ...members.value,
        ...(revalidation.keys ?? []).map((key) => this.#entryKey(key)),
      ]),
    ];
    const markers = this.#markers(revalidation);
    if (entries.length === 0 && markers.length === 0) {
      return { ok: true, value: 0 };
    }
    const touched = await this.#link.call(
      'tier.revalidate',
      (client) =>
        client.eval(REVALIDATE_SCRIPT, {
          keys: [...entries, ...markers],
          arguments: [
            revalidation.mode,
            String(revalidation.at),
            String(entries.length),
            String(REVALIDATION_MARKER_MS),
          ],
        }),
      REVALIDATION_TIMEOUT_MS,
    );
    return touched.ok ? { ok: true, value: Number(touched.value) } : touched;
  }

  /** The markers of the names a revalidation (or an entry) has: its paths, groups and keys. */
  #markers({
    paths,
    groups,
    keys = [],
  }: Pick<Revalidation, 'paths' | 'groups' | 'keys'>): string[] {
    const marker = `${this.#namespace}:revalidated`;
    return [
      ...paths.map((path) => `${marker}:p:${path}`),
      ...groups.map((group) => `${marker}:g:${group}`),
      ...keys.map((key) => `${marker}:k:${key}`),
    ];
  }

  /**
   * The keys the entries of `paths` were made from (their `sources`: a page's data), as whichever
   * process stored them recorded them.
   */
  async sourcesOf(paths: readonly string[]): Promise<Outcome<string[]>> {
    const members = await this.#members(paths, []);
    if (!members.ok || members.value.length === 0) {
      return members;
    }
    const keys = members.value;
    const sources = await this.#link.call(
      'tier.sources',
      (client) => {
        const multi = client.multi();
        keys.forEach((key) => multi.hGet(key, 's'));
        return multi.exec();
      },
      REVALIDATION_TIMEOUT_MS,
    );
    if (!sources.ok) {
      return sources;
    }
    const all = new Set<string>();
    for (const value of sources.value as unknown as (string | null)[]) {
      for (const source of value === null ? [] : (sourceList(String(value)) ?? [])) {
        all.add(source);
      }
    }
    return { ok: true, value: [...all] };
  }

  /** The stored entry keys (with their namespace) of `paths` and `groups`, from their index sets. */
  async #members(paths: readonly string[], groups: readonly string[]): Promise<Outcome<string[]>> {
    const indexes = [
      ...paths.map((path) => `${this.#namespace}:path:${path}`),
      ...groups.map((group) => `${this.#namespace}:group:${group}`),
    ];
    const members = await this.#link.call(
      'tier.groups',
      (client) => (indexes.length === 0 ? Promise.resolve([]) : client.sUnion(indexes)),
      REVALIDATION_TIMEOUT_MS,
    );
    return members.ok ? { ok: true, value: members.value.map((key) => key.toString()) } : members;
  }

  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    for (const waiters of this.#waiters.values()) {
      for (const wake of waiters) {
        wake();
      }
    }
    this.#link.close();
  }

  #entryKey(key: string): string {
    return `${this.#namespace}:entry:${key}`;
  }

  #wake(key: string): void {
    for (const wake of this.#waiters.get(key) ?? []) {
      wake();
    }
  }
}
