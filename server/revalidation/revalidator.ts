// Revalidation on demand: applied to this process's caches (pages, data), told to every other process
// through the configured channels (cluster IPC here; a Redis pub/sub channel plugs in the same
// way), and passed to the CDN purge hook. One entry point whoever asks: the endpoint, the app's
// own server code (server.ts revalidate), an operator (scripts/revalidate.mjs, via the endpoint).
import { channels, traced } from '../observe/channels.ts';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { noted } from '../errors.ts';
import type { Revalidation, RevalidationMode } from '../cache/revalidation.ts';
import type { CdnPurge, CdnPurgeResult } from './cdn-purge.ts';
import { parseRevalidationRequest, type RevalidationRequest } from './request.ts';

/** What travels between processes: the revalidation (`at`: the sender's clock) and who sent it, once. */
export interface RevalidationMessage extends Revalidation {
  /** Unique per sender: a process that hears a message on two channels applies it once. */
  readonly id: string;
}

/** A way to reach the other processes: publish what this one was asked; hear what they were. */
export interface RevalidationChannel {
  /** Named in the report (`cluster`, `redis`). */
  name: string;
  /**
   * Resolves once the message is on its way, with any counts worth reporting (pages of a shared
   * store it touched, processes that heard it); rejects with why it could not be sent.
   */
  publish(message: RevalidationMessage): Promise<void | Record<string, number>>;
  /** Called once, at startup, with the function that applies what arrives. */
  subscribe(onMessage: (message: RevalidationMessage) => void): void;
}

/** The answer to a revalidation, as the endpoint sends it and revalidate() resolves it. */
export interface RevalidationReport {
  id: string;
  mode: RevalidationMode;
  paths: readonly string[];
  groups: readonly string[];
  /** Entries of this process's caches (pages and data) marked stale (soft) or deleted (hard). */
  affected: number;
  /** Each channel: whether the message went out (and what it counted), and if not why. */
  channels: ({ name: string; ok: boolean; error?: string } & Record<string, unknown>)[];
  /** The CDN purge hook's result; null when none is configured (CDN_PURGE_URL). */
  cdn: CdnPurgeResult | null;
}

/** A cache of this process that revalidation reaches: it returns how many entries it touched. */
export interface Revalidatable {
  revalidate(revalidation: Revalidation): number;
}

export interface RevalidatorOptions {
  /** This process's caches: the render cache's pages, the data cache's responses (those that are on). */
  caches: readonly Revalidatable[];
  channels?: RevalidationChannel[];
  cdnPurge?: CdnPurge;
  log: Logger;
  /** The clock `at` is read from (tests). */
  now?: () => number;
}

/** Message ids remembered: far more than can arrive twice within a channel's delivery time. */
const SEEN_IDS = 1024;
/** A channel that has not taken the message by then is reported as failed (it may still deliver). */
const PUBLISH_TIMEOUT_MS = 2000;

export class Revalidator {
  readonly #caches: readonly Revalidatable[];
  readonly #channels: RevalidationChannel[] = [];
  readonly #cdnPurge: CdnPurge | undefined;
  readonly #log: Logger;
  readonly #now: () => number;
  /** Ids applied here, oldest first (a Set keeps insertion order): bounded by SEEN_IDS. */
  readonly #seen = new Set<string>();
  readonly #stats = { requested: 0, received: 0, duplicates: 0, rejected: 0 };

  constructor({ caches, channels = [], cdnPurge, log, now = Date.now }: RevalidatorOptions) {
    this.#caches = caches;
    this.#cdnPurge = cdnPurge;
    this.#log = log;
    this.#now = now;
    channels.forEach((channel) => this.addChannel(channel));
  }

  /** For /healthz: revalidations asked of this process, and those heard from others. */
  get stats(): { requested: number; received: number; duplicates: number; rejected: number } {
    return { ...this.#stats };
  }

  /** Another way to reach the other processes (the shared tier's pub/sub, say). */
  addChannel(channel: RevalidationChannel): void {
    this.#channels.push(channel);
    channel.subscribe((message) => this.#receive(channel.name, message));
  }

  /** Applies `request` here, tells every channel, purges the CDN; resolves with what each did. */
  revalidate(request: RevalidationRequest): Promise<RevalidationReport> {
    return traced(
      channels.revalidate,
      () => ({ mode: request.mode, paths: request.paths.length, groups: request.groups.length }),
      async (traceMessage) => {
        const report = await this.#revalidate(request);
        if (traceMessage !== undefined) {
          traceMessage.affected = report.affected;
        }
        return report;
      },
    );
  }

  async #revalidate(request: RevalidationRequest): Promise<RevalidationReport> {
    this.#stats.requested++;
    const message: RevalidationMessage = { ...request, id: randomUUID(), at: this.#now() };
    this.#remember(message.id);
    const affected = this.#apply(message);
    const [channels, cdn] = await Promise.all([
      Promise.all(this.#channels.map((channel) => this.#publish(channel, message))),
      this.#cdnPurge ? this.#cdnPurge(request) : null,
    ]);
    this.#log.info(
      {
        id: message.id,
        mode: message.mode,
        paths: message.paths.length,
        groups: message.groups.length,
        affected,
      },
      'revalidated',
    );
    return {
      id: message.id,
      mode: message.mode,
      paths: message.paths,
      groups: message.groups,
      affected,
      channels,
      cdn,
    };
  }

  async #publish(
    channel: RevalidationChannel,
    message: RevalidationMessage,
  ): Promise<RevalidationReport['channels'][number]> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const counts = await Promise.race([
        channel.publish(message),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`not sent within ${PUBLISH_TIMEOUT_MS} ms`)),
            PUBLISH_TIMEOUT_MS,
          );
        }),
      ]);
      return { name: channel.name, ok: true, ...(counts ?? {}) };
    } catch (error) {
      const reason = (error as Error).message ?? String(error);
      this.#log.warn(
        { code: noted('ORIGIN_REVALIDATE_CHANNEL_FAILED'), channel: channel.name, err: error },
        'revalidation: a channel failed',
      );
      return { name: channel.name, ok: false, error: reason };
    } finally {
      clearTimeout(timer);
    }
  }

  /** A message from another process: checked (a channel may carry anything), applied once. */
  #receive(channel: string, message: unknown): void {
    const valid = checkMessage(message);
    if (valid === undefined) {
      this.#stats.rejected++;
      this.#log.debug({ channel }, 'revalidation: ignored a message of an unknown shape');
      return;
    }
    if (this.#seen.has(valid.id)) {
      this.#stats.duplicates++;
      return;
    }
    this.#remember(valid.id);
    this.#stats.received++;
    const affected = this.#apply(valid);
    this.#log.debug({ channel, id: valid.id, affected }, 'revalidation received');
  }

  #apply(message: RevalidationMessage): number {
    return this.#caches.reduce((sum, cache) => sum + cache.revalidate(message), 0);
  }

  #remember(id: string): void {
    this.#seen.add(id);
    if (this.#seen.size > SEEN_IDS) {
      this.#seen.delete(this.#seen.values().next().value!);
    }
  }
}

/** The message `value` is, if it is one: a valid request plus a short id and a finite time. */
export function checkMessage(value: unknown): RevalidationMessage | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const { id, at, ...rest } = value as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
    return undefined;
  }
  if (typeof at !== 'number' || !Number.isFinite(at)) {
    return undefined;
  }
  const parsed = parseRevalidationRequest(rest);
  return 'request' in parsed ? { ...parsed.request, id, at } : undefined;
}
