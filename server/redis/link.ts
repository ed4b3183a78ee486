// The origin's one link to Redis (or Valkey): a connection for commands, one for pub/sub, and every
// call bounded in time and behind a circuit breaker. Redis down, slow or refusing costs a request at
// most the call's timeout, and usually nothing (calls are skipped while the breaker is open).
// The shared tier's pages and the revalidation channel both speak through it.
import { createClient, RESP_TYPES } from '@redis/client';
import type { Logger } from 'pino';
import { throttledWarning } from '../logger.ts';
import { channels, traced } from '../channels.ts';
import { CircuitBreaker } from './circuit-breaker.ts';

/** Why a call went without Redis. */
export type SkipReason = 'down' | 'circuit-open' | 'timeout' | 'error';
export type LinkState = 'connecting' | 'ready' | 'down' | 'circuit-open';
export type Outcome<T> = { ok: true; value: T } | { ok: false; reason: SkipReason };

export interface RedisLinkOptions {
  /** `redis://` or `rediss://` (TLS), user and password in the URL (REDIS_URL). */
  url: string;
  /** The longest a request waits on one call before going on without it (REDIS_TIMEOUT_MS). */
  timeoutMs: number;
}

/** Failures in a row that open the breaker, and how long it stays open before one probe. */
const BREAKER_THRESHOLD = 3;
const BREAKER_OPEN_MS = 1000;

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
export type RedisClient = ReturnType<typeof bytesClient>;

export class RedisLink {
  readonly #client: RedisClient;
  readonly #subscriber: ReturnType<typeof createConnection>;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #breaker = new CircuitBreaker(BREAKER_THRESHOLD, BREAKER_OPEN_MS);
  readonly #warnUnavailable: () => void;
  readonly #skipped: Record<SkipReason, number> = {
    down: 0,
    'circuit-open': 0,
    timeout: 0,
    error: 0,
  };
  #connectedOnce = false;
  #closed = false;

  constructor({ url, timeoutMs }: RedisLinkOptions, log: Logger) {
    this.#timeoutMs = timeoutMs;
    this.#log = log;
    this.#warnUnavailable = throttledWarning(log, 'ORIGIN_REDIS_UNAVAILABLE');
    const client = createConnection(url);
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
      .catch((error: unknown) => log.debug({ err: error }, 'shared cache: subscribe'));
  }

  get state(): LinkState {
    if (!this.#client.isReady) {
      return this.#connectedOnce ? 'down' : 'connecting';
    }
    return this.#breaker.open ? 'circuit-open' : 'ready';
  }

  /** Calls that went without Redis, by reason. */
  get skipped(): Record<SkipReason, number> {
    return { ...this.#skipped };
  }

  /**
   * One call to Redis, bounded by `timeoutMs` (the request's bound unless said otherwise), skipped
   * while Redis is down or the breaker open. `operation` names it in traces (`tier.get`).
   */
  call<T>(
    operation: string,
    command: (client: RedisClient) => Promise<T>,
    timeoutMs = this.#timeoutMs,
  ): Promise<Outcome<T>> {
    return traced(
      channels.redis,
      () => ({ operation }),
      async (message) => {
        const outcome = await this.#call(command, timeoutMs);
        if (message !== undefined) {
          message.outcome = outcome.ok ? 'ok' : outcome.reason;
        }
        return outcome;
      },
    );
  }

  async #call<T>(
    command: (client: RedisClient) => Promise<T>,
    timeoutMs: number,
  ): Promise<Outcome<T>> {
    if (!this.#client.isReady) {
      return this.#skip('down');
    }
    if (!this.#breaker.allow()) {
      return this.#skip('circuit-open');
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
        return this.#skip('timeout');
      }
      this.#breaker.success();
      return { ok: true, value };
    } catch (error) {
      this.#breaker.failure();
      this.#warnUnavailable();
      this.#log.debug({ err: error }, 'shared cache: command failed');
      return this.#skip('error');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Hears every message on `channel`, from the moment the subscriber connection is ready. */
  subscribe(channel: string, listener: (message: string) => void): void {
    const subscribe = () =>
      void this.#subscriber
        .subscribe(channel, listener)
        .catch((error: unknown) =>
          this.#log.debug({ err: error, channel }, 'shared cache: subscribe'),
        );
    if (this.#subscriber.isReady) {
      subscribe();
    } else {
      this.#subscriber.once('ready', subscribe);
    }
  }

  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#client.destroy();
    this.#subscriber.destroy();
  }

  #skip<T>(reason: SkipReason): Outcome<T> {
    this.#skipped[reason]++;
    return { ok: false, reason };
  }
}
