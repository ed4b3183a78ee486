// Revalidation across replicas through Redis: the sender applies it to the shared tier's pages and
// data, then every process of every replica hears it (pub/sub on the origin's Redis link), applies
// it to its own caches and says so on a second channel, which the sender counts before the CDN is
// purged (revalidator.ts).
import type { Logger } from 'pino';
import { report } from '../errors.ts';
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
 * A channel over Redis. `publish` first applies the revalidation to this build's pages and the data
 * in Redis (soft: marked stale, hard: deleted; only entries stored before it), then announces it
 * with the sender's build. A process of another build (during a rolling deploy) that hears it
 * applies it to its own build's pages in Redis too; only pages stored before `at` are touched, so
 * however many do it, a page rendered since is left alone. Every process that hears it, the sender
 * included, says it applied it on `<prefix>:revalidate:applied`.
 */
export function redisChannel(options: RedisChannelOptions): RevalidationChannel {
  const { link, pages, data, buildId, log } = options;
  const channel = `${options.keyPrefix}:revalidate`;
  const appliedChannel = `${channel}:applied`;
  const applied = new AppliedCounts(link, appliedChannel);
  return {
    name: 'redis',
    async publish(message) {
      const [appliedPages, appliedData] = await Promise.all(
        [pages, data].map(
          (tier) => tier?.revalidate(message) ?? Promise.resolve({ ok: true as const, value: 0 }),
        ),
      );
      for (const outcome of [appliedPages, appliedData]) {
        if (!outcome.ok) {
          throw new Error(`Redis unavailable (${outcome.reason})`);
        }
      }
      // Counted from before the announcement: a process may say it applied it at once.
      const counting = applied.count(message.id);
      const text = JSON.stringify({ build: buildId, message });
      const heard = await link.call(
        'revalidation.publish',
        (client) => client.publish(channel, text),
        REVALIDATION_TIMEOUT_MS,
      );
      if (!heard.ok) {
        counting.forget();
        throw new Error(`Redis unavailable (${heard.reason})`);
      }
      const processes = Number(heard.value);
      return {
        counts: {
          sharedPages: appliedPages.ok ? appliedPages.value : 0,
          sharedData: appliedData.ok ? appliedData.value : 0,
          processes,
        },
        applied: (signal) => counting.until(processes, signal),
      };
    },
    subscribe(onMessage) {
      link.subscribe(channel, (text) => {
        const message = heard(text, log);
        if (message === undefined) {
          return;
        }
        const valid = checkMessage(message.message);
        if (valid !== undefined && message.build !== buildId) {
          void pages?.revalidate(valid);
        }
        // Shapes are the Revalidator's to judge (and count); it applies each message once.
        onMessage((valid ?? message.message) as RevalidationMessage);
        if (valid !== undefined) {
          void link.call('revalidation.applied', (client) =>
            client.publish(appliedChannel, valid.id),
          );
        }
      });
    },
  };
}

/** A published message as JSON, or undefined (logged) when it is not JSON. */
function heard(text: string, log: Logger): { build?: unknown; message?: unknown } | undefined {
  try {
    return JSON.parse(text) as { build?: unknown; message?: unknown };
  } catch {
    report(log, 'ORIGIN_REVALIDATE_INVALID', {}, ': an unreadable message on the Redis channel');
    return undefined;
  }
}

/** The processes that said they applied each of this sender's messages, while it waits for them. */
class AppliedCounts {
  readonly #counting = new Map<string, { applied: number; wake: () => void }>();

  constructor(link: RedisLink, channel: string) {
    link.subscribe(channel, (id) => {
      const entry = this.#counting.get(id);
      if (entry !== undefined) {
        entry.applied++;
        entry.wake();
      }
    });
  }

  /** Counts from now what is said of message `id`, until `until` resolves or `forget`. */
  count(id: string): {
    until: (expected: number, signal: AbortSignal) => Promise<number>;
    forget: () => void;
  } {
    const entry = { applied: 0, wake: () => undefined as void };
    this.#counting.set(id, entry);
    const forget = () => this.#counting.delete(id);
    return {
      forget,
      until: (expected, signal) =>
        new Promise<number>((resolve) => {
          const finish = () => {
            forget();
            signal.removeEventListener('abort', finish);
            resolve(Math.min(entry.applied, expected));
          };
          entry.wake = () => {
            if (entry.applied >= expected) {
              finish();
            }
          };
          signal.addEventListener('abort', finish, { once: true });
          entry.wake();
        }),
    };
  }
}
