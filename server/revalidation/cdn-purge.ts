// The CDN purge hook: the paths or groups a revalidation names, purged at the CDN in front too, by
// calling its purge API once per item (CDN_PURGE_URL, a URL template). Called by the process that
// received the revalidation only, never by the others that hear about it.
import type { Logger } from 'pino';
import type { RevalidationRequest } from './request.ts';
import { noted } from '../errors.ts';

export interface CdnPurgeConfig {
  /** A URL template with `{group}` or `{path}` (one call per item), and optionally `{mode}`. */
  url: string;
  method: string;
  /** Sent as `Authorization: Bearer <token>`, or as the value of `tokenHeader`. */
  token: string | undefined;
  tokenHeader: string | undefined;
}

/** What the CDN made of a revalidation, as the revalidate answer reports it. */
export interface CdnPurgeResult {
  ok: boolean;
  /** Calls made (one per group, or per path). */
  requests: number;
  /** Items the template cannot purge (paths for a `{group}` template, groups for a `{path}` one). */
  skipped: number;
  /** Calls that failed: the CDN's status, or why no status came. */
  failed: { item: string; status?: number; error?: string }[];
}

/** Calls at once: a bulk revalidation must not open hundreds of connections to the CDN's API. */
const CONCURRENCY = 4;
/** Per call: a CDN API slower than this counts as failed (no retry: the caller can send it again). */
const TIMEOUT_MS = 5000;
/** Failed items listed in a report and a log line: the count says how many there were. */
const MAX_LISTED = 50;

/** Which placeholder a template purges by; config.ts accepts templates with exactly one. */
export function purgeTarget(template: string): 'group' | 'path' | undefined {
  const group = template.includes('{group}');
  const path = template.includes('{path}');
  return group === path ? undefined : group ? 'group' : 'path';
}

/** The URL for one item: a group is percent-encoded whole; a path keeps its slashes. */
export function purgeUrl(template: string, item: string, mode: string): string {
  return template
    .replaceAll('{group}', encodeURIComponent(item))
    .replaceAll('{path}', encodeURIComponent(item).replaceAll('%2F', '/'))
    .replaceAll('{mode}', encodeURIComponent(mode));
}

export type CdnPurge = (request: RevalidationRequest) => Promise<CdnPurgeResult>;

export function createCdnPurge(config: CdnPurgeConfig, log: Logger): CdnPurge {
  const target = purgeTarget(config.url);
  const headers: Record<string, string> = {};
  if (config.token !== undefined) {
    headers[config.tokenHeader ?? 'authorization'] =
      config.tokenHeader === undefined ? `Bearer ${config.token}` : config.token;
  }
  return async (request) => {
    const items = target === 'group' ? request.groups : request.paths;
    const skipped = (target === 'group' ? request.paths : request.groups).length;
    const failed: CdnPurgeResult['failed'] = [];
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++];
        const failure = await purgeOne(purgeUrl(config.url, item, request.mode));
        if (failure !== undefined) {
          failed.push({ item, ...failure });
        }
      }
    };
    const purgeOne = async (url: string) => {
      try {
        const response = await fetch(url, {
          method: config.method,
          headers,
          signal: AbortSignal.timeout(TIMEOUT_MS),
          redirect: 'manual',
        });
        // The body is of no use; reading it frees the connection.
        await response.arrayBuffer().catch(() => undefined);
        return response.ok ? undefined : { status: response.status };
      } catch (error) {
        return { error: describe(error) };
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
    if (failed.length > 0) {
      // Never lost silently: logged here and reported in the answer.
      log.warn(
        {
          code: noted('ORIGIN_CDN_PURGE_FAILED'),
          failed: failed.slice(0, MAX_LISTED),
          failures: failed.length,
          requests: items.length,
        },
        'CDN purge: some calls failed',
      );
    }
    return {
      ok: failed.length === 0,
      requests: items.length,
      skipped,
      failed: failed.slice(0, MAX_LISTED),
    };
  };
}

/** A fetch failure in a few words: the timeout, or the network error's code (fetch hides it in `cause`). */
function describe(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return `no answer within ${TIMEOUT_MS} ms`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
