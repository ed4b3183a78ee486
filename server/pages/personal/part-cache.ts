// A visitor's rendered parts, kept for that visitor alone (a part's `maxAge`): keyed by what the
// part's render saw of the request — its declared cookies and headers, hashed, never as they are —
// with the build, the locale, the part and its inputs, so that no two visitors share an entry and a
// deploy never mixes builds. In this process's memory, bounded in bytes (PART_CACHE_BYTES), and
// revalidated by group (`visitor-…`: what addCacheGroups in the part said) like the other caches.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { StoredEntry } from '../../cache/entry.ts';
import { EntryStore } from '../../cache/store.ts';
import type { PartRule } from './declarations.ts';

export interface CachedPart extends StoredEntry {
  /** The part's HTML for this visitor (the styles it needs before it). */
  html: Buffer;
}

export type PartStore = EntryStore<CachedPart>;

/** Bookkeeping per entry beyond the HTML: the key, the object, the index. */
const ENTRY_OVERHEAD_BYTES = 256;

export function createPartStore(maxBytes: number): PartStore {
  return new EntryStore<CachedPart>({
    maxBytes,
    // A visitor's part is asked for again on their next page: no second-request admission.
    admission: 'first',
    sizeOf: (entry, key) => entry.html.length + key.length + ENTRY_OVERHEAD_BYTES,
  });
}

/** What of the request a part's render sees: its declared cookies (first values) and headers. */
export interface SeenInputs {
  cookies: readonly (readonly [string, string])[];
  headers: readonly (readonly [string, string])[];
}

/** The cookies and headers `rule` declares that the request carries, in the declaration's order. */
export function seenInputs(
  rule: PartRule,
  cookies: ReadonlyMap<string, string>,
  headers: IncomingHttpHeaders,
): SeenInputs {
  const seenCookies: [string, string][] = [];
  for (const name of rule.cookies) {
    const value = cookies.get(name);
    if (value !== undefined) {
      seenCookies.push([name, value]);
    }
  }
  const seenHeaders: [string, string][] = [];
  for (const name of rule.headers) {
    const value = headers[name];
    if (value !== undefined) {
      seenHeaders.push([name, Array.isArray(value) ? value.join(', ') : value]);
    }
  }
  return { cookies: seenCookies, headers: seenHeaders };
}

/**
 * The key of a visitor's part: readable up to the inputs, then a SHA-256 of what the render saw of
 * the request (each name and value length-prefixed, so that no two different requests collide by
 * concatenation).
 */
export function partKey(
  where: { build: string; locale: string | undefined },
  name: string,
  inputs: Record<string, unknown>,
  seen: SeenInputs,
): string {
  const hash = createHash('sha256');
  for (const [kind, pairs] of [
    ['cookie', seen.cookies],
    ['header', seen.headers],
  ] as const) {
    for (const [pairName, value] of pairs) {
      hash.update(`${kind}:${pairName.length}:${pairName}:${value.length}:${value}\n`);
    }
  }
  return `${where.build}\n${where.locale ?? ''}\n${name}\n${JSON.stringify(inputs)}\n${hash.digest('base64url')}`;
}
