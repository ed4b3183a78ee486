import { inject, RESPONSE_INIT } from '@angular/core';

/**
 * Declares what the page being rendered was made from: its cache groups (RFC 9875 HTTP Cache
 * Groups), sent as the `Cache-Groups` response header, e.g. `"product-42", "catalog"`. The origin
 * keeps them with the cached page, so revalidating a group (`POST /_origin/revalidate`,
 * docs/revalidation.md) refreshes every page that declared it; a CDN that reads the header (or its
 * configured aliases) can purge the same set.
 *
 * Call it in an injection context (a constructor, a field initializer, a resolver). Groups add to
 * any already set during this render. In the browser there is no response: it does nothing.
 * Throws when a group is empty or not printable ASCII (what an RFC 8941 String can hold).
 */
export function addCacheGroups(...groups: string[]): void {
  for (const group of groups) {
    if (typeof group !== 'string' || !/^[\x20-\x7e]{1,256}$/.test(group)) {
      throw new TypeError(
        `addCacheGroups: a cache group must be 1 to 256 printable ASCII characters, got ${JSON.stringify(group)}`,
      );
    }
  }
  const response = inject(RESPONSE_INIT, { optional: true });
  if (!response || groups.length === 0) {
    return;
  }
  const headers = response.headers;
  const current = readHeader(headers);
  const known = new Set(current === undefined ? [] : parseStrings(current));
  const added: string[] = [];
  for (const group of groups) {
    if (!known.has(group)) {
      known.add(group);
      added.push(group);
    }
  }
  if (added.length === 0) {
    return;
  }
  const value = [current, ...added.map(serialize)].filter(Boolean).join(', ');
  writeHeader(response, value);
}

const NAME = 'cache-groups';

/** An RFC 8941 String: quoted, with `"` and `\` escaped. */
function serialize(group: string): string {
  return `"${group.replace(/["\\]/g, '\\$&')}"`;
}

/** The strings of a value this helper (or the app) wrote, to skip groups already there. */
function parseStrings(value: string): string[] {
  return [...value.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) =>
    match[1].replace(/\\(.)/g, '$1'),
  );
}

/** RESPONSE_INIT.headers as CommonEngine (a record), Angular's engine (Headers) or an app (pairs) left it. */
function readHeader(headers: HeadersInit | undefined): string | undefined {
  if (headers === undefined) {
    return undefined;
  }
  if (headers instanceof Headers) {
    return headers.get(NAME) ?? undefined;
  }
  if (Array.isArray(headers)) {
    const values = headers.filter(([name]) => name.toLowerCase() === NAME).map(([, v]) => v);
    return values.length > 0 ? values.join(', ') : undefined;
  }
  const name = Object.keys(headers).find((key) => key.toLowerCase() === NAME);
  return name === undefined ? undefined : headers[name];
}

/** Writes the whole value in place, where the engine reads the headers back after the render. */
function writeHeader(response: ResponseInit, value: string): void {
  const headers = response.headers;
  if (headers === undefined) {
    response.headers = { 'Cache-Groups': value };
  } else if (headers instanceof Headers) {
    headers.set(NAME, value);
  } else if (Array.isArray(headers)) {
    const kept = headers.filter(([name]) => name.toLowerCase() !== NAME);
    headers.splice(0, headers.length, ...kept, ['Cache-Groups', value]);
  } else {
    const name = Object.keys(headers).find((key) => key.toLowerCase() === NAME) ?? 'Cache-Groups';
    headers[name] = value;
  }
}
