import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { freshNonce, type ContentSecurityPolicy } from './csp/policy.ts';

interface HttpError {
  status?: number;
  expose?: boolean;
  message?: string;
  headers?: Record<string, string>;
  /** What the app wrote to the console while rendering (pages/render-console.ts). */
  consoleOutput?: string[];
}

/**
 * Turns any error below it into a clean answer: 4xx with its short message as text, 503 and 5xx
 * as a static HTML page with no detail. A server error is logged as one line with the stack and
 * whatever the app wrote to the console while rendering.
 */
export function errorHandler(
  log: Logger,
  onShed: () => void,
  csp?: ContentSecurityPolicy,
): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const {
        status = 500,
        expose = false,
        message = '',
        headers = {},
        consoleOutput,
      } = (error ?? {}) as HttpError;
      const valid = Number.isInteger(status) && status >= 400 && status <= 599;
      const code = valid ? status : 500;
      if (code === 503 && expose) {
        onShed();
      } else if (code >= 500) {
        log.error(
          { err: error, method: ctx.method, url: ctx.url, console: consoleOutput },
          'request failed',
        );
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
      if (code >= 500) {
        if (code === 503) {
          ctx.set('Retry-After', '1');
        }
        ctx.type = 'html';
        ctx.body = code === 503 ? OVERLOADED_PAGE : SERVER_ERROR_PAGE;
        if (csp) {
          // Like every HTML answer under a policy: the pages hold no script or style element, so
          // the nonce is only in the header.
          const headers = csp.headers(freshNonce());
          for (let i = 0; i < headers.length; i += 2) {
            ctx.set(headers[i], headers[i + 1]);
          }
        }
      } else {
        ctx.type = 'text';
        ctx.body = expose && message ? message : ctx.message;
      }
    }
  };
}

/** Static pages for failures: no render, no stack, nothing that could fail in turn. */
const errorPage = (title: string, text: string) =>
  Buffer.from(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">` +
      `<h1>${title}</h1><p>${text}</p></body></html>`,
  );

const SERVER_ERROR_PAGE = errorPage(
  'Something went wrong',
  'The page could not be shown. Please try again.',
);
const OVERLOADED_PAGE = errorPage(
  'Busy right now',
  'Too many people are here at once. Please try again in a moment.',
);
