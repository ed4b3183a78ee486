// Revalidation across replicas through Redis: the sender applies it to the shared tier's pages, then
// every process of every replica hears it (pub/sub on the origin's Redis link) and applies it to its own.
import type { Logger } from 'pino';
import type { RedisLink } from '../redis/link.ts';
import { REVALIDATION_TIMEOUT_MS } from '../cache/shared-tier.ts';
import type { PageTier } from '../render-cache/page-cache.ts';
import { checkMessage, type RevalidationChannel, type RevalidationMessage } from './revalidator.ts';

export interface RedisChannelOptions {
  link: RedisLink;
  shared: PageTier;
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
  const { link, shared, buildId, log } = options;
  const channel = `${options.keyPrefix}:revalidate`;
  return {
    name: 'redis',
    async publish(message) {
      const applied = await shared.revalidate(message);
      if (!applied.ok) {
        throw new Error(`Redis unavailable (${applied.reason})`);
      }
      const text = JSON.stringify({ build: buildId, message });
      const heard = await link.call(
        (client) => client.publish(channel, text),
        REVALIDATION_TIMEOUT_MS,
      );
      if (!heard.ok) {
        throw new Error(`Redis unavailable (${heard.reason})`);
      }
      return { sharedPages: applied.value, processes: Number(heard.value) };
    },
    subscribe(onMessage) {
      link.subscribe(channel, (text) => {
        let published: { build?: unknown; message?: unknown };
        try {
          published = JSON.parse(text) as typeof published;
        } catch {
          log.warn('revalidation: an unreadable message on the Redis channel, ignored');
          return;
        }
        const message: RevalidationMessage | undefined = checkMessage(published?.message);
        if (message !== undefined && published.build !== buildId) {
          void shared.revalidate(message);
        }
        // Shapes are the Revalidator's to judge (and count); it applies each message once.
        onMessage((message ?? published?.message) as RevalidationMessage);
      });
    },
  };
}
