// Revalidation across replicas through the shared tier: the sender applies it to the pages in
// Redis, then every process of every replica hears it (Redis pub/sub) and applies it to its own.
import type { Logger } from 'pino';
import type { SharedRevalidation, SharedTier } from '../render-cache/shared-tier.ts';

/** A revalidation as published: the sender's build, so that other builds apply it to their pages too. */
interface Published<T> {
  build: string;
  message: T;
}

export interface RedisChannelOptions {
  shared: SharedTier;
  buildId: string;
  log: Logger;
}

/**
 * A channel over Redis. `publish` first applies the revalidation to this build's pages in Redis
 * (soft: marked stale, hard: deleted; only pages stored before it), then announces it. A process
 * of another build (a rolling deploy) that hears it applies it to its build's pages in Redis too;
 * the `at` condition makes that idempotent, so however many do it, a page rendered after the
 * revalidation is never touched.
 */
export class RedisChannel<T extends SharedRevalidation> {
  readonly name = 'redis';
  readonly #shared: SharedTier;
  readonly #buildId: string;
  readonly #log: Logger;

  constructor({ shared, buildId, log }: RedisChannelOptions) {
    this.#shared = shared;
    this.#buildId = buildId;
    this.#log = log;
  }

  /** Applies and announces; resolves with how many shared pages it touched and how many processes heard it. */
  async publish(message: T): Promise<{ sharedPages: number; processes: number }> {
    const applied = await this.#shared.revalidate(message);
    if (!applied.ok) {
      throw new Error(`Redis unavailable (${applied.reason})`);
    }
    const published: Published<T> = { build: this.#buildId, message };
    const heard = await this.#shared.publishRevalidation(JSON.stringify(published));
    if (!heard.ok) {
      throw new Error(`Redis unavailable (${heard.reason})`);
    }
    return { sharedPages: applied.value, processes: heard.value };
  }

  subscribe(onMessage: (message: T) => void): void {
    this.#shared.onRevalidation((text) => {
      let published: Published<T>;
      try {
        published = JSON.parse(text) as Published<T>;
      } catch {
        this.#log.warn('revalidation: an unreadable message on the Redis channel, ignored');
        return;
      }
      if (published.build !== this.#buildId) {
        void this.#shared.revalidate(published.message);
      }
      onMessage(published.message);
    });
  }
}
