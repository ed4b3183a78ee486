// A render as the origin answers it: one Answer (http/answer.ts) with its headers decided once,
// and the cache groups it declared.
import type { Logger } from 'pino';
import { noncedAnswer } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { answer, type Answer, type PerResponseBody, REVALIDATE } from '../http/answer.ts';
import { strongEtag } from '../http/entity-tag.ts';
import {
  aliasHeaders,
  type GroupAlias,
  parseCacheGroups,
  serializeCacheGroups,
} from '../cache/cache-groups.ts';
import type { DataUse } from '../data-cache/data-cache.ts';
import { DATA_CACHE_HEADER } from '../data-cache/http-rules.ts';
import {
  cappedFreshness,
  privateCacheControl,
  TARGETED_CACHE_CONTROL,
} from '../http/cache-control.ts';
import { RENDER_INPUTS_HEADER } from '../request/render-inputs.ts';
import type { RenderRequest } from '../request/render-request.ts';
import type { EngineOutput } from './engine.ts';

export const HTML = 'text/html; charset=utf-8';

/** What pageOf does with a page's Cache-Groups besides sending it on. */
export interface CacheGroupOptions {
  /** The CDN spellings to add (CACHE_GROUP_ALIASES). */
  cacheGroupAliases: readonly GroupAlias[];
  /** Where an invalid header is noted (debug). */
  log: Logger;
}

/** A rendered page: its answer and the cache groups (RFC 9875) it declared. */
export interface Page {
  answer: Answer;
  /** What on-demand revalidation by group matches; empty when none or the header is invalid. */
  groups: readonly string[];
}

/** How a page was made, which decides how far it may be shared. */
export interface PageMaking {
  /** What of the visitor its render saw (request/render-request.ts). */
  sees: RenderRequest['sees'];
  /**
   * Angular's ErrorHandler reported an error while rendering: the page may be broken. (A fetch of
   * its data that failed counts as such too: data.failed.)
   */
  failed: boolean;
  /** The request inputs its route declares (render-inputs.ts), for shared caches downstream. */
  vary: string | undefined;
  /** What its data allows (data-cache/): its groups, freshness and privacy; undefined: none fetched. */
  data?: DataUse;
  /** Its URL's path: the tag a CDN purges the page's path by (the xkey alias). */
  path?: string;
}

/**
 * The answer for a render: Content-Type, the headers the app set through RESPONSE_INIT (less the
 * origin's own route declarations), its Cache-Control — decided here, once — and, for a 2xx answer,
 * a strong ETag of the body. With a Content-Security-Policy, an HTML body is stored with nonce
 * placeholders: its ETag is weak, and no shared cache downstream may store it
 * (csp/nonce-template.ts). `final` holds the headers as the app left them, for the render cache's
 * decision to store. A `Cache-Groups` header is sent on as the app set it, its groups kept on the
 * page, and spelled again in the CDN `aliases` configured.
 *
 * Nothing leaves more shareable than what it was made from: a page whose render saw the visitor's
 * request, or that sets a cookie, goes out private (http/cache-control.ts); one whose render
 * failed, `no-store`. Either loses CDN-Cache-Control and Surrogate-Control. Only a page made from
 * its URL and declared inputs alone keeps the Cache-Control its route or app gave it (revalidate
 * before each use when none).
 */
export function pageOf(
  output: EngineOutput,
  making: PageMaking,
  csp?: ContentSecurityPolicy,
  groupOptions?: CacheGroupOptions,
): { page: Page; final: Headers; shareable: boolean } {
  const final = output.headers;
  // The route's own declarations, for the origin alone.
  [RENDER_INPUTS_HEADER, DATA_CACHE_HEADER].forEach((name) => final.delete(name));
  const type = final.get('content-type') ?? HTML;
  const failed = making.failed || making.data?.failed === true;
  const shareable =
    making.sees === 'declared' && !failed && !final.has('set-cookie') && !making.data?.private;
  withData(final, making.data, shareable);
  const cacheControl = cacheControlOf(final.get('cache-control') ?? undefined, failed, shareable);
  const made = pageBody(output.html, type, output.status, cacheControl, csp);
  const headers = ['Content-Type', type];
  for (const [name, value] of final) {
    if (
      name !== 'content-type' &&
      name !== 'cache-control' &&
      // A nonced answer says its own CDN-Cache-Control: no shared cache may keep it either.
      ((shareable && !made.nonced) || !TARGETED_CACHE_CONTROL.has(name))
    ) {
      headers.push(headerName(name), value);
    }
  }
  headers.push(...made.headers);
  if (making.vary !== undefined) {
    addVary(headers, making.vary);
  }
  const groups = groupsOf(final, groupOptions?.log);
  if (groupOptions && groupOptions.cacheGroupAliases.length > 0) {
    headers.push(...aliasHeaders(groups, groupOptions.cacheGroupAliases, making.path));
  }
  return {
    page: {
      answer: answer(output.status, headers, made.body, {
        validators: made.etag === undefined ? undefined : { etag: made.etag },
        perResponse: made.perResponse,
      }),
      groups,
    },
    final,
    shareable,
  };
}

/** A page's body as it goes out, and the headers that go with it (caching and validators). */
export interface PageBody {
  body: Buffer;
  /** Cache-Control and ETag, or a nonced answer's own (csp/nonce-template.ts). */
  headers: string[];
  etag: string | undefined;
  perResponse: PerResponseBody | undefined;
  /** Stored with nonce placeholders: each response gets its own nonce. */
  nonced: boolean;
}

/**
 * A page's body (a render's, the client-side shell) with its Cache-Control and validator, one
 * way for every page: with a policy, an HTML body is stored with placeholders where each
 * response's nonce goes, and its Cache-Control, CDN-Cache-Control and weak ETag are those of a
 * nonced answer (csp/nonce-template.ts); else it goes as it is, with a strong ETag for a 2xx (like
 * @koa/etag: no hash for a 404 page rendered per bad URL).
 */
export function pageBody(
  html: string | Buffer,
  type: string,
  status: number,
  cacheControl: string,
  csp?: ContentSecurityPolicy,
): PageBody {
  const validated = status >= 200 && status < 300;
  if (csp && type.startsWith('text/html')) {
    const nonced = noncedAnswer(html.toString(), csp, cacheControl, validated);
    return {
      body: nonced.body,
      headers: [...nonced.headers],
      etag: nonced.etag,
      perResponse: nonced.slots,
      nonced: true,
    };
  }
  // A Buffer body: the writer sends it as it is, with no regex or byte count over the page.
  const body = typeof html === 'string' ? Buffer.from(html) : html;
  const etag = validated ? strongEtag(body) : undefined;
  return {
    body,
    headers: ['Cache-Control', cacheControl, ...(etag === undefined ? [] : ['ETag', etag])],
    etag,
    perResponse: undefined,
    nonced: false,
  };
}

/** A page's Cache-Control: no-store after a failure, for the browser alone unless shareable. */
function cacheControlOf(declared: string | undefined, failed: boolean, shareable: boolean): string {
  if (failed) {
    return 'no-store';
  }
  return shareable ? (declared ?? REVALIDATE) : privateCacheControl(declared);
}

/**
 * The page's final headers with what its data allows: its data's groups added to its Cache-Groups
 * (revalidating one reaches both), and, for a page shared caches may keep, its lifetimes no longer
 * than its data's freshness where the data said it (a page is never fresher than what it was made
 * from).
 */
function withData(final: Headers, data: DataUse | undefined, shareable: boolean): void {
  if (data === undefined) {
    return;
  }
  if (data.groups.size > 0) {
    const own = parseCacheGroups(final.get('cache-groups') ?? '') ?? [];
    final.set('cache-groups', serializeCacheGroups(new Set([...own, ...data.groups])));
  }
  const cacheControl = final.get('cache-control');
  if (shareable && data.freshMs !== undefined && cacheControl !== null) {
    final.set('cache-control', cappedFreshness(cacheControl, Math.floor(data.freshMs / 1000)));
  }
}

/** Adds names to the answer's Vary (the app's own, if it set one). */
function addVary(headers: string[], vary: string): void {
  const at = headers.indexOf('Vary');
  if (at === -1) {
    headers.push('Vary', vary);
  } else {
    headers[at + 1] = `${headers[at + 1]}, ${vary}`;
  }
}

/** The groups of the app's final Cache-Groups header; an invalid one groups nothing (RFC 9875 §2). */
function groupsOf(final: Headers, log: Logger | undefined): string[] {
  const value = final.get('cache-groups');
  if (value === null) {
    return [];
  }
  const groups = parseCacheGroups(value);
  if (groups === undefined) {
    log?.debug({ value }, 'Cache-Groups is not a list of strings: the page belongs to no group');
  }
  return groups ?? [];
}

/** Names as the origin sends its own (`Cache-Control`): Headers hands them over in lower case. */
function headerName(lowerCase: string): string {
  // Remembered: the regex showed in CPU profiles of the miss path (docs/architecture.md#what-each-optimization-saves).
  let name = SPELLED.get(lowerCase);
  if (name === undefined) {
    name =
      SPECIAL_NAMES[lowerCase] ??
      lowerCase.replace(
        /(^|-)([a-z])/g,
        (_, dash: string, letter: string) => dash + letter.toUpperCase(),
      );
    // Bounded: an app's header names are few, but nothing stops it from making up new ones.
    if (SPELLED.size < 256) {
      SPELLED.set(lowerCase, name);
    }
  }
  return name;
}

const SPELLED = new Map<string, string>();

const SPECIAL_NAMES: Record<string, string> = {
  etag: 'ETag',
  'www-authenticate': 'WWW-Authenticate',
};
