// Cache-Status (RFC 9211): what each cache did with a request, as a value that decisions read, and
// the header it is sent as, spelled here and nowhere else.

/** The cache's name: this process's render cache. */
const CACHE_NAME = 'render-cache';
/** The shared tier's name: listed before this process's cache, being nearer the origin (RFC 9211 §2). */
const SHARED_CACHE_NAME = 'shared-cache';

/** Why a request was forwarded past a cache (RFC 9211 §2.2's `fwd`, the values this origin gives). */
export type Forwarded = 'uri-miss' | 'stale' | 'bypass';

/** One cache's entry: what it did, as RFC 9211's parameters. */
export interface CacheEntry {
  /** Answered from this cache. */
  hit?: true;
  fwd?: Forwarded;
  /** The status the forwarded request got (a failed render answered with a stale page). */
  fwdStatus?: number;
  /** The answer was stored in this cache. */
  stored?: true;
  /** Seconds of freshness left, negative once stale. */
  ttl?: number;
  /** Waited for the same request already on its way instead of sending another. */
  collapsed?: true;
  /** A token saying more: why the cache was bypassed, why nothing was stored. */
  detail?: string;
}

/** What the render cache and, when there is one, the shared tier did. */
export interface CacheStatus {
  local: CacheEntry;
  shared?: CacheEntry;
}

/** The header, flat (name, value), for a response's extra headers. */
export function cacheStatusHeader(status: CacheStatus): [string, string] {
  const local = `${CACHE_NAME}${parameters(status.local)}`;
  return [
    'Cache-Status',
    status.shared === undefined
      ? local
      : `${SHARED_CACHE_NAME}${parameters(status.shared)}, ${local}`,
  ];
}

/** RFC 8941 parameters, in one fixed order, each after `; ` as the origin has always sent them. */
function parameters(entry: CacheEntry): string {
  return [
    entry.hit && 'hit',
    entry.fwd !== undefined && `fwd=${entry.fwd}`,
    entry.fwdStatus !== undefined && `fwd-status=${entry.fwdStatus}`,
    entry.stored && 'stored',
    entry.ttl !== undefined && `ttl=${entry.ttl}`,
    entry.collapsed && 'collapsed',
    entry.detail !== undefined && `detail=${entry.detail}`,
  ].reduce<string>((text, part) => (part ? `${text}; ${part}` : text), '');
}
