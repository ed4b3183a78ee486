import type { IncomingMessage, ServerResponse } from 'node:http';
import { isApiPath } from './app-api/api-path.ts';
import type { StaticIndex } from './files/static-index.ts';
import { writeAnswer } from './http/answer.ts';
import { channels, followed, nameRequest, pageServed, type RouteMessage } from './channels.ts';
import type { Pages } from './pages/pages.ts';
import { HEALTH_PATHS, type Readiness } from './process/health.ts';
import { ORIGIN_PATH_PREFIX } from './revalidation/endpoint.ts';
import { countHostHeaders, type RequestOrigins } from './request/request-origin.ts';

/**
 * The fast path: requests Koa's steps would answer from memory, answered before Koa with the same
 * answers through the same writer (http/answer.ts), without Koa's context, compose and respond: a
 * fraction of the CPU per answer (docs/architecture.md#what-each-optimization-saves).
 *
 * It answers, today, only a GET or HEAD with one Host header whose raw values the guard has
 * allowed before, while the process is ready (not draining), and whose target is either
 * - exactly the path of a file held in memory — a build file or a prerendered page (nothing to
 *   decode, no query) — what filesFromMemory would answer; or
 * - a plain page path (no query, `%`, `\` or extension, not a file) whose page is fresh in the
 *   render cache and answered 200 — what the pages step would answer from the cache: the shared
 *   page, or a returning visitor's copy of it when every personal part is kept for them.
 * The origin's own paths (`/healthz`, `/readyz`, `/_origin/…`) are never answered here, nor the
 * app's API (`/api/…`) when it has one: those are its to answer, whatever a file or page is there.
 * Everything else returns false and goes through Koa. Middleware added to Koa does not see the
 * requests answered here: turn it off (FAST_PATH=false) if some must.
 */
export function fastPath(
  index: StaticIndex,
  readiness: Readiness,
  origins: RequestOrigins,
  pages: Pages | undefined,
  {
    api = false,
    nameOf,
  }: {
    api?: boolean;
    /** What names a request answered here, for its observers (origin.ts). */
    nameOf?: (req: IncomingMessage, res: ServerResponse) => RouteMessage | undefined;
  } = {},
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !readiness.ready) {
      return false;
    }
    const target = req.url!;
    if (
      HEALTH_PATHS.has(target) ||
      target.startsWith(ORIGIN_PATH_PREFIX) ||
      (api && isApiPath(target)) ||
      countHostHeaders(req.rawHeaders) > 1
    ) {
      return false;
    }
    const origin = origins.known(req);
    if (origin === undefined) {
      return false;
    }
    const file = index.verbatim(target);
    if (file !== undefined) {
      answeredHere(req, res, nameOf);
      writeAnswer(req, res, file);
      return true;
    }
    if (
      pages === undefined ||
      !PLAIN_PAGE_TARGET.test(target) ||
      index.get(target) ||
      index.onDisk(target)
    ) {
      return false;
    }
    const fresh = pages.fresh(origin, target, req.headers, res);
    if (fresh === undefined) {
      return false;
    }
    answeredHere(req, res, nameOf, 'hit');
    writeAnswer(req, res, fresh.answer, fresh.headers);
    return true;
  };
}

/** Says that a request was answered here, when anyone listens: named, and a page's cache outcome. */
function answeredHere(
  req: IncomingMessage,
  res: ServerResponse,
  nameOf: ((req: IncomingMessage, res: ServerResponse) => RouteMessage | undefined) | undefined,
  cache?: 'hit',
): void {
  if (channels.route.hasSubscribers && followed(res)) {
    const named = nameOf?.(req, res);
    if (named !== undefined) {
      // Set, not spread: the build lowers object spread to a helper that cost ~0.9 µs per answer
      // here (docs/architecture.md#what-each-optimization-saves).
      named.entrance = 'fast-path';
      nameRequest(named);
    }
  }
  if (cache !== undefined) {
    pageServed({ res, cache });
  }
}

/** A page path the fast path may answer from the render cache: short, no query, nothing to decode, no extension. */
const PLAIN_PAGE_TARGET = /^\/(?=[^?%\\]{0,8190}$)(?:[^/?%\\]*\/)*[^/.?%\\]*$/;
