// The render cache's second tier: one store on Redis (or Valkey) for every process of every
// replica. Every call is bounded in time and behind a circuit breaker: Redis down, slow or refusing
// costs a request at most `timeoutMs`, and usually nothing (it is skipped while the breaker is open).
import { randomBytes } from 'node:crypto';
import { createClient, RESP_TYPES } from '@redis/client';
import type { Logger } from 'pino';
import type { SharedCacheConfig } from '../config.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { throttledWarning } from '../logger.ts';
import { CircuitBreaker } from './circuit-breaker.ts';
import { entryMeta, pageOfEntry } from './shared-entry.ts';
import { type CachedPage, lifetimeMs, pathOf } from './store.ts';

/** Why a request went on without the shared tier (the `detail` of its Cache-Status entry). */
export type SkipReason = 'down' | 'circuit-open' | 'timeout' | 'error';
export type SharedState = 'connecting' | 'ready' | 'down' | 'circuit-open';

export type SharedLookup = { found: CachedPage } | { found: undefined } | { skipped: SkipReason };

/** A render this process holds the lock for; release it once the page is stored (or not). */
export interface Lease {
  release(): Promise<void>;
}
export type LockResult = { lease: Lease } | { held: true } | { skipped: SkipReason };

/** A revalidation as it travels between processes (revalidation/). */
export interface SharedRevalidation {
  paths: readonly string[];
  groups: readonly string[];
  mode: 'soft' | 'hard';
  /** The sender's clock: only entries stored before it are touched. */
  at: number;
}

export interface SharedTierStats {
  state: SharedState;
  hits: number;
  stale: number;
  misses: number;
  stores: number;
  /** Pages over SHARED_CACHE_MAX_ENTRY_BYTES, kept by their process only. */
  tooLarge: number;
  /** Waits for another process's render of the same page (instead of rendering it too). */
  lockWaits: number;
  /** Requests that went on without Redis, by reason. */
  skipped: Record<SkipReason, number>;
  /** Entries Redis held that this process could not read (another layout, a corrupt value). */
  unreadable: number;
}

/** Failures in a row that open the breaker, and how long it stays open before one probe. */
const BREAKER_THRESHOLD = 3;
const BREAKER_OPEN_MS = 1000;
/** A lock outlives its holder by at most this; the holder renews it while it renders. */
const LEASE_MS = 3000;
/** Revalidation is an operator's call, not a request: it may wait longer than a lookup. */
const REVALIDATION_TIMEOUT_MS = 5000;

/** Touches the entries stored before ARGV[2]: soft marks them revalidated, hard deletes them. */
const REVALIDATE_SCRIPT = `
local touched = 0
for _, key in ipairs(KEYS) do
  local storedAt = redis.call('HGET', key, 't')
  if storedAt and tonumber(storedAt) < tonumber(ARGV[2]) then
    if ARGV[1] == 'hard' then redis.call('DEL', key) else redis.call('HSET', key, 'r', ARGV[2]) end
    touched = touched + 1
  end
end
return touched`;
/** Renews (ARGV[2] = ms) or releases (no ARGV[2]) a lock only while it is still ours. */
const LEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])`;

type Outcome<T> = { ok: true; value: T } | { ok: false; reason: SkipReason };

const TIMED_OUT = Symbol('timed out');

function createConnection(url: string) {
  return createClient({
    url,
    // A request never queues behind a reconnect: it goes on without Redis at once.
    disableOfflineQueue: true,
    // Notices a Redis that vanished without closing the connection (a network partition).
    pingInterval: 5000,
    socket: {
      connectTimeout: 2000,
      // Retries forever, at most 2 s apart: shared hits resume within seconds of Redis coming back.
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  });
}

/** Replies in bytes: page bodies stay Buffers, never decoded and encoded again. */
function bytesClient(connection: ReturnType<typeof createConnection>) {
  return connection.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}
type Client = ReturnType<typeof bytesClient>;

export interface SharedTierOptions extends SharedCacheConfig {
  /** The build's id (render-cache/build-id.ts): builds never read each other's pages. */
  buildId: string;
  csp: ContentSecurityPolicy | undefined;
  log: Logger;
}

/**
 * Pages in Redis under `<prefix>:{<build>-<csp>}:…` (one hash-tag per build, so a Redis Cluster keeps
 * a build's keys on one shard, as the scripts need): `page:<key>` a hash (m: metadata, b: body,
 * t: stored at, r: soft-revalidated at), `group:<group>` and `path:<path>` sets of page keys for
 * revalidation, `lock:<key>` the render lock. Renders are announced on `<namespace>:rendered`.
 */
export class SharedTier {
  readonly #client: Client;
  readonly #subscriber: ReturnType<typeof createConnection>;
  readonly #namespace: string;
  readonly #revalidationChannel: string;
  readonly #options: SharedTierOptions;
  readonly #breaker = new CircuitBreaker(BREAKER_THRESHOLD, BREAKER_OPEN_MS);
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #warnUnavailable: () => void;
  #connectedOnce = false;
  #closed = false;
  readonly #stats = {
    hits: 0,
    stale: 0,
    misses: 0,
    stores: 0,
    tooLarge: 0,
    lockWaits: 0,
    unreadable: 0,
    skipped: { down: 0, 'circuit-open': 0, timeout: 0, error: 0 } as Record<SkipReason, number>,
  };

  constructor(options: SharedTierOptions) {
    this.#options = options;
    const { log } = options;
    this.#namespace = `${options.keyPrefix}:{${options.buildId}-${options.csp ? 'csp' : 'plain'}}`;
    this.#revalidationChannel = `${options.keyPrefix}:revalidate`;
    this.#warnUnavailable = throttledWarning(
      log,
      'shared cache: Redis unavailable, serving from this process and rendering meanwhile',
    );
    const client = createConnection(options.url);
    this.#client = bytesClient(client);
    this.#subscriber = client.duplicate();
    for (const [name, connection] of [
      ['client', client],
      ['subscriber', this.#subscriber],
    ] as const) {
      connection.on('error', (error: Error) => {
        this.#warnUnavailable();
        log.debug({ err: error, connection: name }, 'shared cache: Redis connection error');
      });
      connection.on('ready', () => {
        this.#connectedOnce = true;
        log.info({ connection: name }, 'shared cache: connected to Redis');
      });
    }
    // Connects in the background: the origin serves (from its own cache and by rendering) meanwhile.
    client.connect().catch((error: unknown) => log.debug({ err: error }, 'shared cache: connect'));
    this.#subscriber
      .connect()
      .then(() =>
        this.#subscriber.subscribe(`${this.#namespace}:rendered`, (key: string) => this.#wake(key)),
      )
      .catch((error: unknown) => log.debug({ err: error }, 'shared cache: subscribe'));
  }

  get stats(): SharedTierStats {
    return { state: this.state, ...this.#stats, skipped: { ...this.#stats.skipped } };
  }

  get state(): SharedState {
    if (!this.#client.isReady) {
      return this.#connectedOnce ? 'down' : 'connecting';
    }
    return this.#breaker.open ? 'circuit-open' : 'ready';
  }

  /** The page stored for `key`, if Redis answers in time. */
  async get(key: string): Promise<SharedLookup> {
    const outcome = await this.#run(this.#options.timeoutMs, (client) =>
      client.hmGet(this.#pageKey(key), ['m', 'b', 'r']),
    );
    if (!outcome.ok) {
      return { skipped: outcome.reason };
    }
    const [meta, body, revalidatedAt] = outcome.value;
    if (meta === null || body === null) {
      this.#stats.misses++;
      return { found: undefined };
    }
    const page = pageOfEntry(meta.toString(), body, revalidatedAt !== null, this.#options.csp);
    if (page === undefined) {
      this.#stats.unreadable++;
      this.#stats.misses++;
      return { found: undefined };
    }
    return { found: page };
  }

  /** Counts what a lookup's page turned out to be worth (the caller judges its freshness). */
  countHit(stale: boolean): void {
    this.#stats[stale ? 'stale' : 'hits']++;
  }

  /**
   * Stores a page for every process, with its groups and path indexed for revalidation, and tells
   * the processes waiting for it. Returns what happened.
   */
  async put(key: string, page: CachedPage): Promise<'stored' | 'too-large' | SkipReason> {
    if (page.body.length > this.#options.maxEntryBytes) {
      this.#stats.tooLarge++;
      return 'too-large';
    }
    const ttl = lifetimeMs(page.policy) - Math.max(0, Date.now() - page.storedAt);
    if (ttl <= 0) {
      return 'stored';
    }
    const pageKey = this.#pageKey(key);
    const indexes = [
      `${this.#namespace}:path:${pathOf(key)}`,
      ...(page.groups ?? []).map((group) => `${this.#namespace}:group:${group}`),
    ];
    const outcome = await this.#run(this.#options.timeoutMs, (client) => {
      const multi = client
        .multi()
        .del(pageKey)
        .hSet(pageKey, {
          m: entryMeta(page),
          b: page.body,
          t: String(page.storedAt),
          // Stored already stale: a soft revalidation came while it rendered.
          ...(page.revalidated ? { r: String(page.storedAt) } : {}),
        })
        .pExpire(pageKey, ttl);
      for (const index of indexes) {
        // An index lives as long as its longest-lived page: NX gives a new set its expiry, GT extends it.
        multi.sAdd(index, pageKey).pExpire(index, ttl, 'NX').pExpire(index, ttl, 'GT');
      }
      return multi.publish(`${this.#namespace}:rendered`, key).exec();
    });
    if (!outcome.ok) {
      return outcome.reason;
    }
    this.#stats.stores++;
    return 'stored';
  }

  /**
   * Takes the render lock for `key`: `lease` when this process is to render it, `held` while
   * another one does (wait with `renderedElsewhere`, then look again).
   */
  async lock(key: string): Promise<LockResult> {
    const lockKey = `${this.#namespace}:lock:${key}`;
    const token = randomBytes(16).toString('base64url');
    const outcome = await this.#run(this.#options.timeoutMs, (client) =>
      client.set(lockKey, token, { condition: 'NX', expiration: { type: 'PX', value: LEASE_MS } }),
    );
    if (!outcome.ok) {
      return { skipped: outcome.reason };
    }
    if (outcome.value === null) {
      this.#stats.lockWaits++;
      return { held: true };
    }
    // Renewed while the render runs: a holder that dies (or hangs) loses the lock within LEASE_MS.
    const renew = setInterval(() => {
      void this.#run(this.#options.timeoutMs, (client) =>
        client.eval(LEASE_SCRIPT, { keys: [lockKey], arguments: [token, String(LEASE_MS)] }),
      );
    }, LEASE_MS / 3);
    renew.unref();
    return {
      lease: {
        release: async () => {
          clearInterval(renew);
          await this.#run(this.#options.timeoutMs, (client) =>
            client
              .multi()
              .eval(LEASE_SCRIPT, { keys: [lockKey], arguments: [token] })
              // Waiters look again at once, stored or not (a page that may not be shared, say).
              .publish(`${this.#namespace}:rendered`, key)
              .exec(),
          );
        },
      },
    };
  }

  /**
   * Resolves when another process announces a render of `key`, after `maxWaitMs` (the holder may
   * have died: the caller looks again and may take the lock), or when `signal` aborts.
   */
  renderedElsewhere(key: string, maxWaitMs: number, signal?: AbortSignal): Promise<void> {
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
   * Applies a revalidation to this build's pages: those of the paths and groups, stored before
   * `at`. Returns how many it touched.
   */
  async revalidate(revalidation: SharedRevalidation): Promise<Outcome<number>> {
    const indexes = [
      ...revalidation.paths.map((path) => `${this.#namespace}:path:${path}`),
      ...revalidation.groups.map((group) => `${this.#namespace}:group:${group}`),
    ];
    const members = await this.#run(REVALIDATION_TIMEOUT_MS, (client) =>
      indexes.length === 0 ? Promise.resolve([]) : client.sUnion(indexes),
    );
    if (!members.ok) {
      return members;
    }
    const keys = members.value.map((key) => key.toString());
    if (keys.length === 0) {
      return { ok: true, value: 0 };
    }
    const touched = await this.#run(REVALIDATION_TIMEOUT_MS, (client) =>
      client.eval(REVALIDATE_SCRIPT, {
        keys,
        arguments: [revalidation.mode, String(revalidation.at)],
      }),
    );
    return touched.ok ? { ok: true, value: Number(touched.value) } : touched;
  }

  /** Sends a message to every process subscribed with `onRevalidation` (this one included). */
  async publishRevalidation(message: string): Promise<Outcome<number>> {
    const outcome = await this.#run(REVALIDATION_TIMEOUT_MS, (client) =>
      client.publish(this.#revalidationChannel, message),
    );
    return outcome.ok ? { ok: true, value: Number(outcome.value) } : outcome;
  }

  /** Hears every revalidation published by any process of any build sharing this prefix. */
  onRevalidation(listener: (message: string) => void): void {
    const subscribe = () =>
      this.#subscriber.subscribe(this.#revalidationChannel, (message: string) => listener(message));
    if (this.#subscriber.isReady) {
      void subscribe().catch(() => undefined);
    } else {
      this.#subscriber.once('ready', () => void subscribe().catch(() => undefined));
    }
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
    this.#client.destroy();
    this.#subscriber.destroy();
  }

  #pageKey(key: string): string {
    return `${this.#namespace}:page:${key}`;
  }

  #wake(key: string): void {
    for (const wake of this.#waiters.get(key) ?? []) {
      wake();
    }
  }

  /** One call to Redis, bounded by `timeoutMs`, skipped while Redis is down or the breaker open. */
  async #run<T>(timeoutMs: number, command: (client: Client) => Promise<T>): Promise<Outcome<T>> {
    const skip = (reason: SkipReason): Outcome<T> => {
      this.#stats.skipped[reason]++;
      return { ok: false, reason };
    };
    if (!this.#client.isReady) {
      return skip('down');
    }
    if (!this.#breaker.allow()) {
      return skip('circuit-open');
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const value = await Promise.race([
        command(this.#client),
        new Promise<typeof TIMED_OUT>((resolve) => {
          // Declared only after the I/O phase that follows: a reply that arrived while this process
          // was busy (or waiting for a CPU) wins; the bound is on Redis, not on our own stalls.
          // Without it, cold processes under load timed out on replies already in the socket.
          timer = setTimeout(() => setImmediate(resolve, TIMED_OUT), timeoutMs);
        }),
      ]);
      if (value === TIMED_OUT) {
        this.#breaker.failure();
        this.#warnUnavailable();
        return skip('timeout');
      }
      this.#breaker.success();
      return { ok: true, value };
    } catch (error) {
      this.#breaker.failure();
      this.#warnUnavailable();
      this.#options.log.debug({ err: error }, 'shared cache: command failed');
      return skip('error');
    } finally {
      clearTimeout(timer);
    }
  }
}
