// The CDN purge hook: the paths and groups a revalidation names, purged at the CDN in front too,
// through its purge API (CDN_PURGE_URL, a URL template). Called by the process that received the
// revalidation only, never by the others that hear about it, and only once they applied it
// (revalidator.ts): a CDN refetching a page must not find an old one at an origin.
//
// Calls are batched and bounded. Items wait in a queue per mode; each call takes as many as its
// template takes (`{groups}`: a list, `{group}` or `{path}`: one), at most CONCURRENCY calls at once;
// an item already waiting is not queued twice. Past MAX_PENDING waiting items, new ones fail at once
// ("queue full", reported and logged): a revalidation storm costs a bounded queue and a few calls a
// second to the CDN, never unbounded memory or connections.
import type { Logger } from 'pino';
import { groupTag, pathTag } from '../cache/cache-groups.ts';
import type { RevalidationMode } from '../cache/revalidation.ts';
import { report } from '../errors.ts';
import type { RevalidationRequest } from './request.ts';

export interface CdnPurgeConfig {
  /**
   * A URL template with `{groups}` (a comma-separated list of tags per call), `{group}` (one tag
   * per call) or `{path}` (one path per call), and optionally `{mode}`.
   */
  url: string;
  method: string;
  /** Sent as `Authorization: Bearer <token>`, or as the value of `tokenHeader`. */
  token: string | undefined;
  tokenHeader: string | undefined;
}

/** What the CDN made of a revalidation, as the revalidate answer reports it. */
export interface CdnPurgeResult {
  ok: boolean;
  /** Calls that carried this revalidation's items (a call may carry other revalidations' too). */
  requests: number;
  /** Items the template cannot purge (groups for a `{path}` template). */
  skipped: number;
  /** Items that failed: the CDN's status, or why no status came. */
  failed: { item: string; status?: number; error?: string }[];
}

/** Calls at once: a bulk revalidation must not open hundreds of connections to the CDN's API. */
const CONCURRENCY = 4;
/** Per call: a CDN API slower than this counts as failed (no retry: the caller can send it again). */
const TIMEOUT_MS = 5000;
/** Failed items listed in a report and a log line: the count says how many there were. */
const MAX_LISTED = 50;
/** Items waiting for a call, all modes together: the bound of the queue. */
export const MAX_PENDING = 10_000;
/** Tags in one `{groups}` call, and the characters they take in its URL (a request line stays short). */
export const MAX_BATCH_TAGS = 100;
export const MAX_BATCH_CHARS = 4000;

type Target = 'groups' | 'group' | 'path';

/** What a template purges by; config.ts accepts templates with exactly one of them. */
export function purgeTarget(template: string): Target | undefined {
  const targets = (['groups', 'group', 'path'] as const).filter((target) =>
    template.includes(`{${target}}`),
  );
  return targets.length === 1 ? targets[0] : undefined;
}

/**
 * The items a template purges for a revalidation: for a group template, each group's tag and each
 * path's (the tag every stored page carries for its path with the xkey alias: cache-groups.ts); for
 * a path template, the paths, percent-encoded with their slashes kept, groups skipped.
 */
export function purgeItems(
  template: string,
  { paths, groups }: Pick<RevalidationRequest, 'paths' | 'groups'>,
): { items: string[]; skipped: number } {
  if (purgeTarget(template) === 'path') {
    return {
      items: paths.map((path) => encodeURIComponent(path).replaceAll('%2F', '/')),
      skipped: groups.length,
    };
  }
  return { items: [...groups.map(groupTag), ...paths.map(pathTag)], skipped: 0 };
}

/** The URL of one call: its items (already spelled: purgeItems) in place, and the mode. */
export function purgeUrl(template: string, items: readonly string[], mode: string): string {
  return template
    .replaceAll('{groups}', items.join(','))
    .replaceAll('{group}', items[0])
    .replaceAll('{path}', items[0])
    .replaceAll('{mode}', encodeURIComponent(mode));
}

export type CdnPurge = (request: RevalidationRequest) => Promise<CdnPurgeResult>;

/** An item's outcome: the call it went in (numbered), and how that call went. */
interface Outcome {
  call: number;
  status?: number;
  error?: string;
}

/** An item waiting for a call, and those waiting for its outcome. */
interface Waiting {
  item: string;
  mode: RevalidationMode;
  settle: ((outcome: Outcome) => void)[];
}

/** The queue's bound, MAX_PENDING unless a test says otherwise. */
export function createCdnPurge(
  config: CdnPurgeConfig,
  log: Logger,
  { maxPending = MAX_PENDING }: { maxPending?: number } = {},
): CdnPurge {
  const queue = new PurgeQueue(config, maxPending);
  return async (request) => {
    const { items, skipped } = purgeItems(config.url, request);
    const outcomes = await Promise.all(items.map((item) => queue.add(item, request.mode)));
    const failed = outcomes.flatMap(({ status, error }, i) =>
      status === undefined && error === undefined ? [] : [{ item: items[i], status, error }],
    );
    if (failed.length > 0) {
      // Never lost silently: logged here and reported in the answer.
      report(log, 'ORIGIN_CDN_PURGE_FAILED', {
        failed: failed.slice(0, MAX_LISTED),
        failures: failed.length,
        items: items.length,
      });
    }
    return {
      ok: failed.length === 0,
      requests: new Set(outcomes.map(({ call }) => call).filter((call) => call > 0)).size,
      skipped,
      failed: failed.slice(0, MAX_LISTED),
    };
  };
}

/** The items waiting for calls, and the calls under way. */
class PurgeQueue {
  readonly #config: CdnPurgeConfig;
  readonly #headers: Record<string, string> = {};
  readonly #batched: boolean;
  /** Waiting items by mode and item, in the order they came. */
  readonly #waiting: Record<RevalidationMode, Map<string, Waiting>> = {
    soft: new Map(),
    hard: new Map(),
  };
  readonly #maxPending: number;
  #pending = 0;
  #pumpScheduled = false;
  #running = 0;
  #calls = 0;

  constructor(config: CdnPurgeConfig, maxPending: number) {
    this.#config = config;
    this.#maxPending = maxPending;
    this.#batched = purgeTarget(config.url) === 'groups';
    if (config.token !== undefined) {
      this.#headers[config.tokenHeader ?? 'authorization'] =
        config.tokenHeader === undefined ? `Bearer ${config.token}` : config.token;
    }
  }

  /** Resolves with the outcome of the call that purges `item`. */
  add(item: string, mode: RevalidationMode): Promise<Outcome> {
    return new Promise((resolve) => {
      const waiting = this.#waiting[mode].get(item);
      if (waiting !== undefined) {
        // Not yet sent: the call that sends it serves both revalidations.
        waiting.settle.push(resolve);
        return;
      }
      if (this.#pending >= this.#maxPending) {
        resolve({ call: 0, error: `purge queue full (${this.#maxPending} items waiting)` });
        return;
      }
      this.#pending++;
      this.#waiting[mode].set(item, { item, mode, settle: [resolve] });
      this.#schedulePump();
    });
  }

  /** Pumps once what this tick added: a revalidation's items go out together, not one per call. */
  #schedulePump(): void {
    if (!this.#pumpScheduled) {
      this.#pumpScheduled = true;
      queueMicrotask(() => {
        this.#pumpScheduled = false;
        this.#pump();
      });
    }
  }

  /** Starts calls while items wait and fewer than CONCURRENCY run. */
  #pump(): void {
    while (this.#running < CONCURRENCY && this.#pending > 0) {
      const batch = this.#nextBatch();
      this.#running++;
      void this.#send(batch).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  /** The next call's items: hard ones first, and with `{groups}` as many as fit in one call. */
  #nextBatch(): Waiting[] {
    const mode: RevalidationMode = this.#waiting.hard.size > 0 ? 'hard' : 'soft';
    const waiting = this.#waiting[mode];
    const batch: Waiting[] = [];
    let chars = 0;
    for (const entry of waiting.values()) {
      if (
        batch.length > 0 &&
        (!this.#batched ||
          batch.length === MAX_BATCH_TAGS ||
          chars + entry.item.length + 1 > MAX_BATCH_CHARS)
      ) {
        break;
      }
      batch.push(entry);
      chars += entry.item.length + 1;
    }
    for (const entry of batch) {
      waiting.delete(entry.item);
    }
    this.#pending -= batch.length;
    return batch;
  }

  async #send(batch: Waiting[]): Promise<void> {
    const call = ++this.#calls;
    const url = purgeUrl(
      this.#config.url,
      batch.map(({ item }) => item),
      batch[0].mode,
    );
    let outcome: Outcome;
    try {
      const response = await fetch(url, {
        method: this.#config.method,
        headers: this.#headers,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'manual',
      });
      // The body is of no use; reading it frees the connection.
      await response.arrayBuffer().catch(() => undefined);
      outcome = response.ok ? { call } : { call, status: response.status };
    } catch (error) {
      outcome = { call, error: describe(error) };
    }
    for (const { settle } of batch) {
      settle.forEach((resolve) => resolve(outcome));
    }
  }
}

/** A fetch failure in a few words: the timeout, or the network error's code (fetch hides it in `cause`). */
function describe(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return `no answer within ${TIMEOUT_MS} ms`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
