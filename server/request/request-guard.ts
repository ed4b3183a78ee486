import type { Middleware } from 'koa';
import { countHostHeaders, type RequestOrigins } from './request-origin.ts';
import { hasDotSegment } from './url-path.ts';

declare module 'koa' {
  interface DefaultState {
    /**
     * `scheme://host[:port]` of the request, parsed and allowed by the guard (request-origin.ts):
     * with the request target, the only part of a request a render sees.
     */
    origin: string;
  }
}

/** Longer request targets are refused: no page of this app needs one, and each costs work. */
const MAX_URL_LENGTH = 8192;

/**
 * Cheap rejections before any other work, each with the precise status and a short text body:
 * forged or ambiguous hosts, request targets that are not a plain path, and paths that could
 * name something outside the browser build once decoded. Leaves `ctx.state.origin`.
 */
export function requestGuard(origins: RequestOrigins): Middleware {
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
    const resolved = origins.resolve(ctx.req);
    if ('malformed' in resolved) {
      return ctx.throw(400, `Bad Request: malformed ${resolved.malformed} header`);
    }
    if ('notAllowed' in resolved) {
      return ctx.throw(400, 'Bad Request: host not allowed');
    }
    ctx.state.origin = resolved.origin;
    // Most URLs hold no '%', '.' or '\\': they skip decoding and the dot-segment regex.
    if (UNUSUAL_URL.test(url)) {
      const path = decode(ctx.path);
      if (path === undefined || decode(ctx.querystring.replaceAll('+', ' ')) === undefined) {
        return ctx.throw(400, 'Bad Request: malformed percent-encoding');
      }
      if (path.includes('\0') || path.includes('\\') || hasDotSegment(path)) {
        return ctx.throw(
          400,
          'Bad Request: path must not contain dot segments, backslashes or null bytes',
        );
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
