import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { OVERLOADED_PAGE, SERVER_ERROR_PAGE } from './error-pages';

interface HttpError {
  status?: number;
  expose?: boolean;
  message?: string;
  headers?: Record<string, string>;
  /** What the app wrote to the console while rendering (see RenderError). */
  consoleOutput?: string[];
}

/**
 * Turns any error below it into a clean answer: 4xx with its short message as text, 503 and 5xx
 * as a static HTML page with no detail. A server error is logged as one line with the stack and
 * whatever the app wrote to the console while rendering.
 */
export function errorHandler(log: Logger, onShed: () => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { status = 500, expose = false, message = '', headers = {}, consoleOutput } = (error ?? {}) as HttpError;
      const valid = Number.isInteger(status) && status >= 400 && status <= 599;
      const code = valid ? status : 500;
      if (code === 503 && expose) {
        onShed();
      } else if (code >= 500) {
        log.error({ err: error, method: ctx.method, url: ctx.url, console: consoleOutput }, 'request failed');
      }
      if (ctx.headerSent || !ctx.writable) {
        return;
      }
      for (const name of ctx.res.getHeaderNames()) {
        ctx.res.removeHeader(name);
      }
      ctx.set(headers);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = code;
      if (code === 503) {
        ctx.set('Retry-After', '1');
        ctx.type = 'html';
        ctx.body = OVERLOADED_PAGE;
      } else if (code >= 500) {
        ctx.type = 'html';
        ctx.body = SERVER_ERROR_PAGE;
      } else {
        ctx.type = 'text';
        ctx.body = expose && message ? message : ctx.message;
      }
    }
  };
}
