// Revalidation across replicas through Redis: the sender applies it to the shared tier's pages and
// data, then every process of every replica hears it (pub/sub on the origin's Redis link) and
// applies it to its own.
import type { Logger } from 'pino';
import { noted } from '../errors.ts';
import type { Revalidation } from '../cache/revalidation.ts';
import { REVALIDATION_TIMEOUT_MS } from '../cache/shared-tier.ts';
import type { Outcome, RedisLink } from '../redis/link.ts';
import { checkMessage, type RevalidationChannel, type RevalidationMessage } from './revalidator.ts';

/** A shared tier revalidation reaches in Redis: it resolves with how many entries it touched. */
interface SharedRevalidatable {
  revalidate(revalidation: Revalidation): Promise<Outcome<number>>;
}

export interface RedisChannelOptions {
  link: RedisLink;
  /** This build's pages in Redis: what every build's process applies a revalidation to. */
  pages: SharedRevalidatable | undefined;
  /** The data in Redis, every build's: the sender applies a revalidation to it, once. */
  data: SharedRevalidatable | undefined;
  /** The shared tier's REDIS_KEY_PREFIX: origins with another prefix never hear each other. */
  keyPrefix: string;
  buildId: string;
  log: Logger;
}

/**
 * A channel over Redis. `publish` first applies the revalidation to this build's pages in Redis
 * (soft: marked stale, hard: deleted; only pages stored before it), then announces it with the
 * sender's build. A process of another build (during a rolling deploy) that hears it applies it to
 * its own build's pages in Redis too; only pages stored before `at` are touched, so however many
 * do it, a page rendered since is left alone.
 */
export function redisChannel(options: RedisChannelOptions): RevalidationChannel {
  const { link, pages, data, buildId, log } = options;
  const channel = `${options.keyPrefix}:revalidate`;
  return {
    name: 'redis',
    async publish(message) {
      const [appliedPages, appliedData] = await Promise.all(
        [pages, data].map(
          (tier) => tier?.revalidate(message) ?? Promise.resolve({ ok: true as const, value: 0 }),
        ),
      );
      for (const applied of [appliedPages, appliedData]) {
        if (!applied.ok) {
          throw new Error(`Redis unavailable (${applied.reason})`);
        }
      }
      const text = JSON.stringify({ build: buildId, message });
      const heard = await link.call(
        'revalidation.publish',
        (client) => client.publish(channel, text),
        REVALIDATION_TIMEOUT_MS,
      );
      if (!heard.ok) {
        throw new Error(`Redis unavailable (${heard.reason})`);
      }
      return {
        sharedPages: appliedPages.ok ? appliedPages.value : 0,
        sharedData: appliedData.ok ? appliedData.value : 0,
        processes: Number(heard.value),
      };
    },
    subscribe(onMessage) {
      link.subscribe(channel, (text) => {
        let published: { build?: unknown; message?: unknown };
        try {
          published = JSON.parse(text) as typeof published;
        } catch {
          log.warn(
            { code: noted('ORIGIN_REVALIDATE_INVALID') },
            'revalidation: an unreadable message on the Redis channel, ignored',
          );
          return;
        }
        const message: RevalidationMessage | undefined = checkMessage(published?.message);
        if (message !== undefined && published.build !== buildId) {
          void pages?.revalidate(message);
        }
        // Shapes are the Revalidator's to judge (and count); it applies each message once.
        onMessage((message ?? published?.message) as RevalidationMessage);
      });
    },
  };
}
