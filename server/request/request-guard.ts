import type { Middleware } from 'koa';
import { OriginError } from '../errors.ts';
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
      throw new OriginError('ORIGIN_URI_TOO_LONG');
    }
    if (url.charCodeAt(0) !== 0x2f /* / */) {
      // Absolute-form ("GET http://other.example/") and asterisk-form targets: an origin behind a
      // CDN never needs them, and absolute-form would name a host the Host check did not see.
      throw new OriginError('ORIGIN_TARGET_NOT_A_PATH');
    }
    if (countHostHeaders(ctx.req.rawHeaders) > 1) {
      throw new OriginError('ORIGIN_HOST_DUPLICATE');
    }
    const resolved = origins.resolve(ctx.req);
    if ('malformed' in resolved) {
      throw new OriginError('ORIGIN_HOST_MALFORMED', resolved.malformed);
    }
    if ('notAllowed' in resolved) {
      throw new OriginError('ORIGIN_HOST_REJECTED');
    }
    ctx.state.origin = resolved.origin;
    // Most URLs hold no '%', '.' or '\\': they skip decoding and the dot-segment regex.
    if (UNUSUAL_URL.test(url)) {
      const path = decode(ctx.path);
      if (path === undefined || decode(ctx.querystring.replaceAll('+', ' ')) === undefined) {
        throw new OriginError('ORIGIN_TARGET_MALFORMED');
      }
      if (path.includes('\0') || path.includes('\\') || hasDotSegment(path)) {
        throw new OriginError('ORIGIN_TARGET_UNSAFE');
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
