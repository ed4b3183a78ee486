import type { Logger } from 'pino';
import { noncedAnswer, type NonceSlots } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { strongEtag } from '../entity-tag.ts';
import { REVALIDATE } from '../files/static-index.ts';
import { aliasHeaders, type GroupAlias, parseCacheGroups } from '../render-cache/cache-groups.ts';
import { HARMLESS_COOKIES_HEADER } from '../render-cache/policy.ts';
import type { EngineOutput } from './renderer.ts';

export const HTML = 'text/html; charset=utf-8';

/** What pageOf does with a page's Cache-Groups besides sending it on. */
export interface CacheGroupOptions {
  /** The CDN spellings to add (CACHE_GROUP_ALIASES). */
  cacheGroupAliases: readonly GroupAlias[];
  /** Where an invalid header is noted (debug). */
  log: Logger;
}

/** A rendered page as answered: status, every header (flat: name, value, …) and body. */
export interface Page {
  status: number;
  headers: string[];
  body: Buffer;
  /** For a 2xx answer only: like @koa/etag, an error page is sent whole every time. */
  etag: string | undefined;
  /** With a Content-Security-Policy: `body` holds nonce placeholders, filled per response. */
  nonceSlots?: NonceSlots;
  /**
   * The cache groups (RFC 9875) the app declared in its `Cache-Groups` header: what on-demand
   * revalidation by group matches (server/revalidation/). Empty when none or the header is invalid.
   */
  groups: string[];
}

/**
 * The answer for a render: Content-Type, the headers the app set through RESPONSE_INIT (less the
 * origin's own route declarations), its Cache-Control — decided here, once: the route's or the
 * app's, else revalidate before each use — and, for a 2xx answer, a strong ETag of the body. With a
 * Content-Security-Policy, an HTML body is stored with nonce placeholders: its ETag is weak, and no
 * shared cache downstream may store it (csp/nonce-template.ts). `final` holds the headers as the app
 * left them, for the render cache's decision to store. A `Cache-Groups` header is sent on as the
 * app set it, its groups kept on the page, and spelled again in the CDN `aliases` configured.
 */
export function pageOf(
  output: EngineOutput,
  csp?: ContentSecurityPolicy,
  groupOptions?: CacheGroupOptions,
): { page: Page; final: Headers } {
  const final = output.headers;
  final.delete(HARMLESS_COOKIES_HEADER);
  const type = final.get('content-type') ?? HTML;
  // Like @koa/etag: validators for 2xx answers only (no hash for a 404 page rendered per bad URL).
  const validated = output.status >= 200 && output.status < 300;
  // With a policy, an HTML page is stored with placeholders where each response's nonce goes, and
  // its Cache-Control, CDN-Cache-Control and ETag are those of a nonced answer.
  const nonced =
    csp && type.startsWith('text/html')
      ? noncedAnswer(
          output.html.toString(),
          csp,
          final.get('cache-control') ?? REVALIDATE,
          validated,
        )
      : undefined;
  // A Buffer body spares Koa a regex and a byte count over the whole page.
  const body =
    nonced?.body ?? (typeof output.html === 'string' ? Buffer.from(output.html) : output.html);
  const etag = nonced ? nonced.etag : validated ? strongEtag(body) : undefined;
  const headers = ['Content-Type', type];
  for (const [name, value] of final) {
    if (name !== 'content-type' && (name !== 'cache-control' || !nonced)) {
      headers.push(headerName(name), value);
    }
  }
  if (nonced) {
    headers.push(...nonced.headers);
  } else {
    if (!final.has('cache-control')) {
      headers.push('Cache-Control', REVALIDATE);
    }
    if (etag !== undefined) {
      headers.push('ETag', etag);
    }
  }
  const groups = groupsOf(final, groupOptions?.log);
  if (groupOptions && groupOptions.cacheGroupAliases.length > 0) {
    headers.push(...aliasHeaders(groups, groupOptions.cacheGroupAliases));
  }
  return {
    page: { status: output.status, headers, body, etag, nonceSlots: nonced?.slots, groups },
    final,
  };
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
  // Remembered: the regex cost 6–13 µs per rendered answer in CPU profiles of the miss path
  // (2026-11-24, bench/README "What the origin adds around a render").
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
