// A response a render fetched, as the data cache keeps it: its status, headers and body, the RFC
// 9111 policy it was stored under (http-cache-semantics' CachePolicy, as an object: it travels
// through Redis), and what the cache core keeps of every entry (cache/store.ts).
import CachePolicy from 'http-cache-semantics';
import type { EntryCodec } from '../cache/shared-tier.ts';
import type { SharedCachePolicy, StoredEntry } from '../cache/entry.ts';

export interface CachedData extends StoredEntry {
  status: number;
  statusText: string;
  /** The response's headers as received (lower-case names), less hop-by-hop ones. */
  headers: Record<string, string>;
  body: Buffer;
  /** What http-cache-semantics made of the request and response: Vary, validators, Age, lifetimes. */
  semantics: CachePolicy.CachePolicyObject;
  /** How to ask for it again in a background refresh: its URL and headers, never credentials. */
  request?: { url: string; headers: Record<string, string> };
  /** Another request may be given it (false: private, no-store, … — it went to its asker alone). */
  reusable?: boolean;
  /** It came from a 304 to a revalidation: the stored body, made fresh again. */
  revalidated304?: boolean;
}

/** Bookkeeping per entry beyond the body: the key, the policy object, the headers' strings. */
const ENTRY_OVERHEAD_BYTES = 1024;

export function dataBytes(entry: CachedData, key: string): number {
  let bytes = key.length + ENTRY_OVERHEAD_BYTES + entry.body.length;
  for (const [name, value] of Object.entries(entry.headers)) {
    bytes += name.length + value.length;
  }
  return bytes;
}

/** Bumped whenever the layout changes: an entry of another version reads as a miss. */
const VERSION = 1;

interface EntryMeta {
  v: number;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  semantics: CachePolicy.CachePolicyObject;
  policy: SharedCachePolicy;
  groups: string[];
  storedAt: number;
  request: { url: string; headers: Record<string, string> } | null;
}

/** How the shared tier stores data: `m` the metadata as JSON, `b` the body's bytes. */
export const dataCodec: EntryCodec<CachedData> = {
  fields: ['m', 'b'],
  write(entry) {
    const meta: EntryMeta = {
      v: VERSION,
      status: entry.status,
      statusText: entry.statusText,
      headers: entry.headers,
      semantics: entry.semantics,
      policy: entry.policy,
      groups: [...entry.groups],
      storedAt: entry.storedAt,
      request: entry.request ?? null,
    };
    return { fields: { m: JSON.stringify(meta), b: entry.body }, bytes: entry.body.length };
  },
  read([metaBytes, body], revalidated) {
    if (metaBytes === null || body === null) {
      return Promise.resolve(undefined);
    }
    let meta: EntryMeta;
    try {
      meta = JSON.parse(metaBytes.toString()) as EntryMeta;
      // Read back once here: a corrupt object fails now, not when a render asks.
      CachePolicy.fromObject(meta.semantics);
    } catch {
      return Promise.resolve(undefined);
    }
    if (!isMeta(meta)) {
      return Promise.resolve(undefined);
    }
    return Promise.resolve({
      status: meta.status,
      statusText: meta.statusText,
      headers: meta.headers,
      body,
      semantics: meta.semantics,
      policy: meta.policy,
      groups: meta.groups,
      storedAt: meta.storedAt,
      refreshFailed: false,
      revalidated,
      request: meta.request ?? undefined,
      reusable: true,
    });
  },
};

function isMeta(meta: EntryMeta | null): boolean {
  return (
    meta?.v === VERSION &&
    Number.isInteger(meta.status) &&
    typeof meta.statusText === 'string' &&
    typeof meta.headers === 'object' &&
    meta.headers !== null &&
    Object.values(meta.headers).every((value) => typeof value === 'string') &&
    Array.isArray(meta.groups) &&
    meta.groups.every((group) => typeof group === 'string') &&
    Number.isFinite(meta.storedAt) &&
    (meta.request === null ||
      (typeof meta.request?.url === 'string' && typeof meta.request.headers === 'object')) &&
    typeof meta.policy === 'object' &&
    meta.policy !== null &&
    [meta.policy.freshMs, meta.policy.staleWhileRevalidateMs, meta.policy.staleIfErrorMs].every(
      (ms) => Number.isFinite(ms) && ms >= 0,
    )
  );
}
