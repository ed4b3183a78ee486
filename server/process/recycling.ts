// A cluster worker's side of recycling (MAX_REQUESTS, MAX_RSS_MB): it notices that it is due and
// asks its primary for a replacement, keeps serving until the replacement listens, then drains
// when the primary says so. The primary's side is in cluster.ts.
import { randomInt } from 'node:crypto';
import type { Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Logger } from 'pino';

/** When a worker is replaced (MAX_REQUESTS, MAX_REQUESTS_JITTER, MAX_RSS_MB). */
export interface RecycleLimits {
  /** Requests a worker serves before it asks to be replaced; undefined: no such limit. */
  maxRequests: number | undefined;
  /** Each worker adds a random 0 to this many requests to its limit, once, when it starts. */
  maxRequestsJitter: number;
  /** Resident memory (bytes) past which a worker asks to be replaced; undefined: no such limit. */
  maxRssBytes: number | undefined;
}

export type RecycleReason = 'max-requests' | 'max-rss';
export const RECYCLE_REASONS: readonly RecycleReason[] = ['max-requests', 'max-rss'];

/** Worker → primary: I am due, start my replacement. */
export const REPLACE_ME = 'origin:replace-me';
/** Primary → worker: your replacement listens; drain and exit. */
export const RETIRE = 'origin:retire';

export interface ReplaceMe {
  type: typeof REPLACE_ME;
  reason: RecycleReason;
}

export function isReplaceMe(value: unknown): value is ReplaceMe {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === REPLACE_ME &&
    RECYCLE_REASONS.includes((value as { reason?: unknown }).reason as RecycleReason)
  );
}

/**
 * How often a worker reads its RSS: a cheap call (one read of /proc on Linux), so often enough that
 * a leak overshoots the limit by a second's growth, where PM2 checks every 30 s.
 */
const RSS_CHECK_MS = 1000;

export interface RecycleOptions {
  limits: RecycleLimits;
  /** Drain and exit: called when the primary says the replacement listens. */
  retire: () => void;
  log: Logger;
}

/**
 * Watches this worker's requests and memory against its limits and asks the primary once for a
 * replacement. The worker keeps serving meanwhile: with replacement first, nobody else may be
 * there to serve (WORKERS=1).
 */
export function recycleWhenDue(
  server: Server | Http2SecureServer,
  { limits, retire, log }: RecycleOptions,
): void {
  const maxRequests =
    limits.maxRequests === undefined
      ? undefined
      : limits.maxRequests + randomInt(limits.maxRequestsJitter + 1);
  let asked = false;
  const ask = (reason: RecycleReason, figures: object) => {
    if (asked) {
      return;
    }
    asked = true;
    clearInterval(rssCheck);
    log.info({ reason, ...figures }, 'recycling: asking the primary for a replacement');
    const message: ReplaceMe = { type: REPLACE_ME, reason };
    process.send?.(message);
  };
  if (maxRequests !== undefined) {
    let served = 0;
    // Every request counts, as in gunicorn, whatever answers it; HTTP/2 streams are requests too.
    server.on('request', () => {
      if (++served === maxRequests) {
        ask('max-requests', { requests: served, maxRequests });
      }
    });
  }
  const { maxRssBytes } = limits;
  const rssCheck =
    maxRssBytes === undefined
      ? undefined
      : setInterval(() => {
          const rssBytes = process.memoryUsage.rss();
          if (rssBytes >= maxRssBytes) {
            ask('max-rss', { rssBytes, maxRssBytes });
          }
        }, RSS_CHECK_MS).unref();
  process.on('message', (message) => {
    if (message === RETIRE) {
      retire();
    }
  });
}

/**
 * Why MAX_RSS_MB cannot work, when this worker already holds that much before it serves anything:
 * each worker would be replaced as soon as it started, forever. Undefined when it can.
 */
export function limitBelowStartingSize(limits: RecycleLimits): string | undefined {
  const rssBytes = process.memoryUsage.rss();
  if (limits.maxRssBytes === undefined || rssBytes < limits.maxRssBytes) {
    return undefined;
  }
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return (
    `MAX_RSS_MB is ${mib(limits.maxRssBytes)}, but a worker holds ${mib(rssBytes)} MiB before it serves anything: ` +
    "set it above a worker's size under load (docs/scaling-and-deploying.md#recycling-workers)"
  );
}
