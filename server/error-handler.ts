import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { NonceSlots } from './csp/nonce-template.ts';
import type { ContentSecurityPolicy } from './csp/policy.ts';
import {
  type ErrorCode,
  errorHappened,
  ERRORS,
  type FailureContext,
  messageOf,
  OriginError,
  REFUSED_BEFORE_ROUTING,
} from './errors.ts';
import { answer, type Answer, respond } from './http/answer.ts';
import { leaveUnnamed } from './channels.ts';

interface HttpError {
  /** Its name (errors.ts); an error without one that fails a request is ORIGIN_RENDER_FAILED. */
  code?: string;
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
  onShed: (context: FailureContext) => void,
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
      const name = nameOf(error, code);
      if (REFUSED_BEFORE_ROUTING.has(name)) {
        // Refused before any route was looked at: its path names nothing of the app's.
        leaveUnnamed(ctx.res);
      }
      if (name === 'ORIGIN_OVERLOADED') {
        // Shed: counted, and said in a throttled line, not one per request.
        onShed({ res: ctx.res });
      } else if (code >= 500) {
        // Said on the request (its span records the error), counted and logged once.
        errorHappened(name, { res: ctx.res, error });
        log.error(
          { code: name, err: error, method: ctx.method, url: ctx.url, console: consoleOutput },
          messageOf('ORIGIN_RENDER_FAILED'),
        );
      } else {
        errorHappened(name, { res: ctx.res });
      }
      if (ctx.headerSent) {
        return;
      }
      for (const name of ctx.res.getHeaderNames()) {
        ctx.res.removeHeader(name);
      }
      const extra = Object.entries(headers).flat();
      respond(
        ctx,
        code >= 500
          ? serverErrorPage(code, extra, csp)
          : clientError(code, extra, clientText(error, code, expose, message)),
      );
    }
  };
}

/**
 * An error's name: its own when errors.ts knows it, else by its status (a client error Koa or a
 * middleware threw, a render that failed).
 */
function nameOf(error: unknown, status: number): ErrorCode {
  const own = (error as HttpError | undefined)?.code;
  if (own !== undefined && own in ERRORS) {
    return own as ErrorCode;
  }
  if (status === 405) {
    return 'ORIGIN_METHOD_NOT_ALLOWED';
  }
  return status >= 500 ? 'ORIGIN_RENDER_FAILED' : 'ORIGIN_TARGET_MALFORMED';
}

/** What a 4xx answer says: an OriginError's own text, another error's message if exposed. */
function clientText(error: unknown, status: number, expose: boolean, message: string): string {
  if (error instanceof OriginError) {
    return error.answerText;
  }
  return expose && message ? message : (STATUS_CODES[status] ?? '');
}

/** A 4xx answer: its short message as text. */
function clientError(status: number, headers: string[], message: string): Answer {
  return answer(
    status,
    [...headers, 'Cache-Control', 'no-store', 'Content-Type', 'text/plain; charset=utf-8'],
    Buffer.from(message),
  );
}

/**
 * A 5xx answer: a static page with no detail. Under a policy, like every HTML answer, with its
 * header and a fresh nonce (the page holds no script or style element that would carry it).
 */
function serverErrorPage(
  status: number,
  headers: string[],
  csp: ContentSecurityPolicy | undefined,
): Answer {
  const body = status === 503 ? OVERLOADED_PAGE : SERVER_ERROR_PAGE;
  return answer(
    status,
    [
      ...headers,
      'Cache-Control',
      'no-store',
      ...(status === 503 ? ['Retry-After', '1'] : []),
      'Content-Type',
      'text/html; charset=utf-8',
    ],
    body,
    { perResponse: csp && new NonceSlots(body, [], csp) },
  );
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
