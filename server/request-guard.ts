import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { createHostCheck } from './allowed-hosts';

/** Longer request targets are refused: no page of this app needs one, and each costs work. */
const MAX_URL_LENGTH = 8192;

/**
 * Cheap rejections before any other work, each with the precise status and a short text body:
 * forged or ambiguous hosts, request targets that are not a plain path, and paths that could
 * name something outside the browser build once decoded.
 */
export function requestGuard(allowedHosts: readonly string[], knownHosts: KnownHosts): Middleware {
  const isAllowedHost = createHostCheck(allowedHosts);
  return (ctx, next) => {
    const url = ctx.req.url ?? '';
    if (url.length > MAX_URL_LENGTH) {
      return ctx.throw(414, 'URI Too Long');
    }
    if (url.charCodeAt(0) !== 0x2f /* / */) {
      // Absolute-form ("GET http://other.example/") and asterisk-form targets: an origin behind a
      // CDN never needs them, and absolute-form would name a host the Host check did not see.
      return ctx.throw(400, 'Bad Request: request target must be a path');
    }
    if (countHostHeaders(ctx.req.rawHeaders) > 1) {
      return ctx.throw(400, 'Bad Request: more than one Host header');
    }
    if (!knownHosts.has(ctx.req)) {
      if (!isAllowedHost(ctx.hostname.toLowerCase())) {
        return ctx.throw(400, 'Bad Request: host not allowed');
      }
      knownHosts.add(ctx.req);
    }
    // Most URLs hold no '%', '.' or '\\': they skip decoding and the dot-segment regex.
    if (UNUSUAL_URL.test(url)) {
      const path = decode(ctx.path);
      if (path === undefined || decode(ctx.querystring.replaceAll('+', ' ')) === undefined) {
        return ctx.throw(400, 'Bad Request: malformed percent-encoding');
      }
      if (path.includes('\0') || path.includes('\\') || /(^|\/)\.\.?(\/|$)/.test(path)) {
        return ctx.throw(400, 'Bad Request: path must not contain dot segments, backslashes or null bytes');
      }
    }
    return next();
  };
}

/** Characters that can hide a dot segment, a backslash or a null byte, or break decoding. */
const UNUSUAL_URL = /[%.\\]/;

function decode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * The host headers of requests already allowed, as sent: skips parsing and matching on every
 * request. Keyed by the raw headers Koa derives the host from, so a hit means Koa would derive an
 * allowed host again. Only allowed values are kept, at most 64, so forged values cannot grow it.
 */
export class KnownHosts {
  readonly #keys = new Set<string>();
  readonly #key: (req: IncomingMessage) => string;

  constructor(trustProxy: boolean) {
    this.#key = trustProxy
      ? (req) => `${req.headers['x-forwarded-host'] ?? ''}\n${req.headers.host ?? ''}`
      : (req) => req.headers.host ?? '';
  }

  has(req: IncomingMessage): boolean {
    return this.#keys.has(this.#key(req));
  }

  add(req: IncomingMessage): void {
    if (this.#keys.size < 64) {
      this.#keys.add(this.#key(req));
    }
  }
}

export function countHostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host') {
      count++;
    }
  }
  return count;
}
