import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { createHostCheck } from './allowed-hosts';
import { parseAuthority, parseForwardedProto } from './host-header';

/** Longer request targets are refused: no page of this app needs one, and each costs work. */
const MAX_URL_LENGTH = 8192;

/**
 * Cheap rejections before any other work, each with the precise status and a short text body:
 * forged or ambiguous hosts, request targets that are not a plain path, and paths that could
 * name something outside the browser build once decoded.
 */
export function requestGuard(allowedHosts: readonly string[], origins: RequestOrigins): Middleware {
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
    let origin = origins.get(ctx.req);
    if (origin === undefined) {
      const parsed = origins.parse(ctx.req);
      if ('malformed' in parsed) {
        return ctx.throw(400, `Bad Request: malformed ${parsed.malformed} header`);
      }
      if (!isAllowedHost(parsed.hostname)) {
        return ctx.throw(400, 'Bad Request: host not allowed');
      }
      origin = parsed.origin;
      origins.add(ctx.req, origin);
    }
    ctx.state['origin'] = origin;
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

/** `scheme://host[:port]` of a request the guard let through (see RequestOrigins). */
export function requestOrigin(ctx: Context): string {
  return ctx.state['origin'] as string;
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
 * The origin (`scheme://host[:port]`) a request names, from its Host header, or from
 * X-Forwarded-Proto and -Host when a trusted proxy sets them. Pages are rendered for this origin
 * plus the request target: nothing else of the headers reaches the renderer.
 *
 * Origins of requests already allowed are remembered by the raw header values they came from, so
 * a hit means the same parse and check would pass again and costs one Map lookup. Only allowed
 * origins are kept, at most 64, so forged values cannot grow it.
 */
export class RequestOrigins {
  readonly #origins = new Map<string, string>();
  readonly #trustProxy: boolean;

  constructor(trustProxy: boolean) {
    this.#trustProxy = trustProxy;
  }

  get(req: IncomingMessage): string | undefined {
    return this.#origins.get(this.#key(req));
  }

  add(req: IncomingMessage, origin: string): void {
    if (this.#origins.size < 64) {
      this.#origins.set(this.#key(req), origin);
    }
  }

  /**
   * Host and, behind a trusted proxy, X-Forwarded-Host and -Proto, each one strict value
   * (host-header.ts), or the name of the first that is malformed or missing. An empty forwarded
   * header counts as absent, as in Koa and Angular.
   */
  parse(req: IncomingMessage): { hostname: string; origin: string } | { malformed: string } {
    const host = req.headers.host;
    const authority = host === undefined ? undefined : parseAuthority(host);
    if (authority === undefined) {
      return { malformed: 'Host' };
    }
    let scheme = isEncrypted(req) ? 'https' : 'http';
    let publicAuthority = authority;
    if (this.#trustProxy) {
      // Node joins repeated headers with ", " (a second value, refused below); never an array here.
      const forwardedHost = req.headers['x-forwarded-host'] as string | undefined;
      const forwardedProto = req.headers['x-forwarded-proto'] as string | undefined;
      if (forwardedHost) {
        const parsed = parseAuthority(forwardedHost);
        if (parsed === undefined) {
          return { malformed: 'X-Forwarded-Host' };
        }
        publicAuthority = parsed;
      }
      if (forwardedProto) {
        const parsed = parseForwardedProto(forwardedProto);
        if (parsed === undefined) {
          return { malformed: 'X-Forwarded-Proto' };
        }
        scheme = parsed;
      }
    }
    const { hostname } = new URL(`${scheme}://${publicAuthority}/`);
    return { hostname, origin: `${scheme}://${publicAuthority}` };
  }

  /** Every header value (and the TLS flag) the origin is derived from. */
  #key(req: IncomingMessage): string {
    const { headers } = req;
    const base = `${isEncrypted(req) ? 's' : ''}\n${headers.host ?? ''}`;
    return this.#trustProxy
      ? `${base}\n${headers['x-forwarded-host'] ?? ''}\n${headers['x-forwarded-proto'] ?? ''}`
      : base;
  }
}

function isEncrypted(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
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
