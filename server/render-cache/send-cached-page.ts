import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';
import { sendWithFreshNonce } from '../csp/nonce-template.ts';
import type { Page } from '../pages/page.ts';
import { GROUP_HEADERS } from './cache-groups.ts';

/** The cache's name in Cache-Status (RFC 9211). */
export const CACHE_NAME = 'render-cache';
/** The shared tier's name: listed before this process's cache, being nearer the origin (RFC 9211 §2). */
export const SHARED_CACHE_NAME = 'shared-cache';

/** Headers a 304 leaves out (pageOf spells every name the same way). */
const NOT_ON_304: ReadonlySet<string> = new Set(['Content-Type', ...GROUP_HEADERS]);

/**
 * Answers with a page of the render cache (or one rendered for it): the page's own headers, its
 * age and what the cache did (Cache-Status, RFC 9211), and 304 when the client's copy is current,
 * as koa-conditional-get and Koa would (a 304 drops Content-Type and Content-Length). The fast path
 * and Koa's pages step both answer through here, so their answers are the same bytes. `sharedStatus`
 * is what the shared tier did, when there is one. Returns the status.
 */
export function sendCachedPage(
  req: IncomingMessage,
  res: ServerResponse,
  page: Page,
  cacheStatus: string,
  ageMs: number | undefined,
  sharedStatus?: string,
): number {
  const headers = [...page.headers];
  if (ageMs !== undefined) {
    headers.push('Age', String(Math.floor(ageMs / 1000)));
  }
  headers.push(
    'Cache-Status',
    sharedStatus === undefined
      ? `${CACHE_NAME}; ${cacheStatus}`
      : `${SHARED_CACHE_NAME}; ${sharedStatus}, ${CACHE_NAME}; ${cacheStatus}`,
  );
  if (page.etag !== undefined && fresh(req.headers, { etag: page.etag })) {
    // Cache-Groups and its aliases describe the full answer: not repeated on a 304.
    res.writeHead(
      304,
      headers.filter((_, i, all) => !NOT_ON_304.has(all[i - (i % 2)])),
    );
    res.end();
    return 304;
  }
  headers.push('Content-Length', String(page.body.length));
  if (page.nonceSlots) {
    // A fresh nonce per response; a 304 above carries no policy (it would update the one the
    // browser keeps with its copy, whose nonce is another).
    sendWithFreshNonce(res, page.status, headers, page.nonceSlots, req.method === 'HEAD');
    return page.status;
  }
  res.writeHead(page.status, headers);
  res.end(req.method === 'HEAD' ? undefined : page.body);
  return page.status;
}
