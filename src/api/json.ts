// JSON answers as an HTTP API sends them to caches: a strong ETag (a digest of the bytes), its
// Cache-Control and cache tags, a 304 to a matching If-None-Match, no body to HEAD, and errors as
// JSON that no cache keeps.

/** How long a cache may keep an answer, and the tags a purge names it by. */
export interface Caching {
  cacheControl: string;
  tags: readonly string[];
}

/** A JSON body made once, with its validator: what a resource that does not change can keep. */
export interface JsonBody {
  text: string;
  etag: string;
}

const JSON_TYPE = 'application/json';

/** The body of `value` and its strong ETag: the first 128 bits of its SHA-256, base64url. */
export async function jsonBody(value: unknown): Promise<JsonBody> {
  const text = JSON.stringify(value);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  const tag = btoa(String.fromCharCode(...new Uint8Array(digest, 0, 16)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return { text, etag: `"${tag}"` };
}

/**
 * Whether If-None-Match names this ETag (RFC 9110 §13.1.2: `*`, or a list compared weakly, so a
 * cache that keeps the weak form of our tag still gets its 304).
 */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (header === null) {
    return false;
  }
  if (header.trim() === '*') {
    return true;
  }
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/** The answer to a GET or HEAD of a JSON resource: 200 with the body, or 304 to a matching validator. */
export function jsonAnswer(request: Request, body: JsonBody, caching: Caching): Response {
  const headers = new Headers({ 'cache-control': caching.cacheControl, etag: body.etag });
  if (caching.tags.length > 0) {
    // Cloudflare's spelling, which the origin's data cache reads as groups (docs/revalidation.md).
    headers.set('cache-tag', caching.tags.join(','));
  }
  if (matchesIfNoneMatch(request.headers.get('if-none-match'), body.etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers.set('content-type', JSON_TYPE);
  const bytes = new TextEncoder().encode(body.text);
  headers.set('content-length', String(bytes.length));
  return new Response(request.method === 'HEAD' ? null : bytes, { status: 200, headers });
}

/** An error as JSON (`{ "error": "…" }`), never stored by a cache. */
export function jsonError(
  request: Request,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const bytes = new TextEncoder().encode(JSON.stringify({ error: message }));
  return new Response(request.method === 'HEAD' ? null : bytes, {
    status,
    headers: {
      ...headers,
      'cache-control': 'no-store',
      'content-type': JSON_TYPE,
      'content-length': String(bytes.length),
    },
  });
}

/** A private JSON answer (a visitor's own data): no cache keeps it. */
export function privateJson(request: Request, status: number, value: unknown): Response {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return new Response(request.method === 'HEAD' ? null : bytes, {
    status,
    headers: {
      'cache-control': 'private, no-store',
      'content-type': JSON_TYPE,
      'content-length': String(bytes.length),
    },
  });
}
