// Revalidation on demand: applied to this process's caches (pages, data), told to every other process
// through the configured channels (cluster IPC, Redis pub/sub), and passed to the CDN purge hook once
// they applied it. A revalidation by path reaches the data the path's pages were made from too. One
// entry point whoever asks: the endpoint, the app's own server code (server.ts revalidate), an
// operator (scripts/revalidate.mjs, via the endpoint).
import { channels, traced } from '../channels.ts';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { report } from '../errors.ts';
import type { Revalidation, RevalidationMode } from '../cache/revalidation.ts';
import type { CdnPurge, CdnPurgeResult } from './cdn-purge.ts';
import { parseRevalidationRequest, type RevalidationRequest } from './request.ts';

/** What travels between processes: the revalidation (`at`: the sender's clock) and who sent it, once. */
export interface RevalidationMessage extends Revalidation {
  /** Unique per sender: a process that hears a message on two channels applies it once. */
  readonly id: string;
}

/** What a channel did with a message. */
export interface Published {
  /** Figures for the report: entries of a shared store it touched, processes that heard it. */
  counts?: Record<string, number>;
  /**
   * Resolves once the processes that heard the message have applied it (they say so), with how
   * many did; `signal` ends the wait (some may never say: a process exiting). Undefined: the
   * channel cannot tell.
   */
  applied?: (signal: AbortSignal) => Promise<number>;
}

/** A way to reach the other processes: publish what this one was asked; hear what they were. */
export interface RevalidationChannel {
  /** Named in the report (`cluster`, `redis`). */
  name: string;
  /** Resolves once the message is on its way; rejects with why it could not be sent. */
  publish(message: RevalidationMessage): Promise<Published>;
  /**
   * Called once, at startup, with the function that applies what arrives; the channel tells the
   * sender once it returned (Published.applied).
   */
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
  /** The data the pages of `paths` were last made from, found here and in the shared tier: revalidated with them. */
  dataOfPaths: number;
  /**
   * Each channel: whether the message went out (and what it counted), how many processes said
   * they applied it before the CDN was purged, and if it failed why.
   */
  channels: ({ name: string; ok: boolean; error?: string } & Record<string, unknown>)[];
  /** The CDN purge hook's result; null when none is configured (CDN_PURGE_URL). */
  cdn: CdnPurgeResult | null;
}

/** A cache of this process that revalidation reaches: it returns how many entries it touched. */
export interface Revalidatable {
  revalidate(revalidation: Revalidation): number;
  /** The keys its entries of `paths` were made from (a page: its data), when it keeps them. */
  sourcesOf?(paths: readonly string[]): string[];
}

export interface RevalidatorOptions {
  /** This process's caches: the render cache's pages, the data cache's responses (those that are on). */
  caches: readonly Revalidatable[];
  channels?: RevalidationChannel[];
  /** The keys the shared tier's pages of `paths` were made from (REDIS_URL), whoever stored them. */
  sharedSources?: (paths: readonly string[]) => Promise<string[]>;
  cdnPurge?: CdnPurge;
  log: Logger;
  /** The clock `at` is read from (tests). */
  now?: () => number;
}

/** Message ids remembered: far more than can arrive twice within a channel's delivery time. */
const SEEN_IDS = 1024;
/** A channel that has not taken the message by then is reported as failed (it may still deliver). */
const PUBLISH_TIMEOUT_MS = 2000;
/**
 * How long the CDN purge waits for the other processes to say they applied the revalidation: they
 * do within milliseconds; one that has not by then (busy, exiting) is counted short in the report.
 */
const APPLIED_WAIT_MS = 1000;
/**
 * The CDN is purged again this long after: a fetch the CDN had under way when it was purged may
 * bring back a page an origin sent just before it applied the revalidation (its bytes still on the
 * wire). The second purge drops it, well inside the second a hard revalidation promises.
 */
const PURGE_AGAIN_MS = 500;
/** Data keys a message carries: enough for a thousand pages' data; past it, their groups still reach it. */
export const MAX_KEYS = 4096;

export class Revalidator {
  readonly #caches: readonly Revalidatable[];
  readonly #channels: RevalidationChannel[] = [];
  readonly #sharedSources: RevalidatorOptions['sharedSources'];
  readonly #cdnPurge: CdnPurge | undefined;
  readonly #log: Logger;
  readonly #now: () => number;
  /** Ids applied here, oldest first (a Set keeps insertion order): bounded by SEEN_IDS. */
  readonly #seen = new Set<string>();
  readonly #stats = { requested: 0, received: 0, duplicates: 0, rejected: 0 };

  constructor({
    caches,
    channels = [],
    sharedSources,
    cdnPurge,
    log,
    now = Date.now,
  }: RevalidatorOptions) {
    this.#caches = caches;
    this.#sharedSources = sharedSources;
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

  /**
   * Applies `request` here and, with the data its paths' pages were made from, everywhere the
   * channels reach; once every process said it applied it, purges the CDN (and once more shortly
   * after); resolves with what each did.
   */
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
    const at = this.#now();
    const keys = await this.#sourcesOf(request.paths);
    const message: RevalidationMessage = { ...request, keys, id: randomUUID(), at };
    this.#remember(message.id);
    const affected = this.#apply(message);
    const channels = await Promise.all(
      this.#channels.map((channel) => this.#publish(channel, message)),
    );
    const cdn = this.#cdnPurge ? await this.#cdnPurge(request) : null;
    if (this.#cdnPurge) {
      this.#purgeAgain(this.#cdnPurge, request);
    }
    this.#log.info(
      {
        id: message.id,
        mode: message.mode,
        paths: message.paths.length,
        groups: message.groups.length,
        dataOfPaths: keys.length,
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
      dataOfPaths: keys.length,
      channels,
      cdn,
    };
  }

  /**
   * The data the pages of `paths` were last made from: as this process's pages and the shared
   * tier's record it (Redis unavailable: this process's alone, the groups still reach the rest).
   */
  async #sourcesOf(paths: readonly string[]): Promise<string[]> {
    if (paths.length === 0) {
      return [];
    }
    const keys = new Set(this.#caches.flatMap((cache) => cache.sourcesOf?.(paths) ?? []));
    const shared = await this.#sharedSources?.(paths).catch(() => []);
    shared?.forEach((key) => keys.add(key));
    return [...keys].slice(0, MAX_KEYS);
  }

  /** A second purge, in the background: logged by the hook when it fails, never reported. */
  #purgeAgain(cdnPurge: CdnPurge, request: RevalidationRequest): void {
    setTimeout(() => void cdnPurge(request), PURGE_AGAIN_MS).unref();
  }

  async #publish(
    channel: RevalidationChannel,
    message: RevalidationMessage,
  ): Promise<RevalidationReport['channels'][number]> {
    let timer: NodeJS.Timeout | undefined;
    let published: Published;
    try {
      published = await Promise.race([
        channel.publish(message),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`not sent within ${PUBLISH_TIMEOUT_MS} ms`)),
            PUBLISH_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      const reason = (error as Error).message ?? String(error);
      report(this.#log, 'ORIGIN_REVALIDATE_CHANNEL_FAILED', { channel: channel.name, err: error });
      return { name: channel.name, ok: false, error: reason };
    } finally {
      clearTimeout(timer);
    }
    const applied = await published.applied?.(AbortSignal.timeout(APPLIED_WAIT_MS));
    return {
      name: channel.name,
      ok: true,
      ...published.counts,
      ...(applied === undefined ? {} : { applied }),
    };
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

  /**
   * Applies a message to this process's caches, with the data this process's own pages of its paths
   * were made from (the sender may not have known of them: cluster workers without Redis). Data
   * found here that the message did not name goes to the other processes too, in a message of its own.
   */
  #apply(message: RevalidationMessage): number {
    const named = new Set(message.keys);
    const found =
      message.paths.length === 0
        ? []
        : this.#caches.flatMap((cache) => cache.sourcesOf?.(message.paths) ?? []);
    const extra = [...new Set(found)].filter((key) => !named.has(key)).slice(0, MAX_KEYS);
    const keys = [...named, ...extra];
    const affected = this.#caches.reduce(
      (sum, cache) => sum + cache.revalidate({ ...message, keys }),
      0,
    );
    if (extra.length > 0) {
      const followUp: RevalidationMessage = {
        paths: [],
        groups: [],
        keys: extra,
        mode: message.mode,
        at: message.at,
        id: randomUUID(),
      };
      this.#remember(followUp.id);
      for (const channel of this.#channels) {
        void this.#publish(channel, followUp);
      }
    }
    return affected;
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
  const { id, at, keys = [], ...rest } = value as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0 || id.length > 128) {
    return undefined;
  }
  if (typeof at !== 'number' || !Number.isFinite(at)) {
    return undefined;
  }
  if (!isKeyList(keys)) {
    return undefined;
  }
  // A message of data keys alone (found by another process's pages) names no path or group.
  const parsed = parseRevalidationRequest(rest, { empty: keys.length > 0 });
  if (!('request' in parsed)) {
    return undefined;
  }
  const { request } = parsed;
  return { ...request, keys, id, at };
}

/** Keys as a message carries them: at most MAX_KEYS strings of a bounded length. */
function isKeyList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_KEYS &&
    value.every((key) => typeof key === 'string' && key.length > 0 && key.length <= 16 * 1024)
  );
}
