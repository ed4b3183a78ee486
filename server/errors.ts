// Every failure the origin answers or logs, by a stable name: in its log line (`code`), on its
// request's span, and in origin_errors_total{code}. docs/errors.md says what each means and what
// to do about it (a test keeps the two lists the same). Each is made in one way, from its row of
// the table, as fastify's lib/errors.js makes its errors: thrown as an OriginError (an answer), or
// logged by report(); either says so once on the error channel, where the counts, the access log
// and the traces hear of it.
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Logger } from 'pino';
import { channels, type ErrorMessage } from './channels.ts';

/** How a failure of a code is made: its answer's status (if it answers), its message, how loud. */
interface ErrorKind {
  /** The status of the answer it gets; undefined for failures no request is answered with. */
  status?: number;
  /**
   * The message of its log line, and the text of a 4xx answer (after "Bad Request: " for a 400);
   * `%s` takes the arguments its maker was given, in order.
   */
  message: string;
  /** The level of its log line: report() logs it there, a throttled warning at `warn`. */
  level: 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  /**
   * False for the one failure nothing can count: the start stopped, there is no process to ask
   * (ORIGIN_CANNOT_START, printed on stderr). Every other is counted in origin_errors_total.
   */
  counted?: false;
}

export const ERRORS = {
  // A request the origin refuses before any work (request/).
  ORIGIN_URI_TOO_LONG: { status: 414, message: 'URI Too Long', level: 'debug' },
  ORIGIN_TARGET_NOT_A_PATH: {
    status: 400,
    message: 'request target must be a path',
    level: 'debug',
  },
  ORIGIN_HOST_DUPLICATE: { status: 400, message: 'more than one Host header', level: 'debug' },
  ORIGIN_HOST_MALFORMED: { status: 400, message: 'malformed %s header', level: 'debug' },
  ORIGIN_HOST_REJECTED: { status: 400, message: 'host not allowed', level: 'debug' },
  ORIGIN_TARGET_MALFORMED: { status: 400, message: 'malformed percent-encoding', level: 'debug' },
  ORIGIN_TARGET_UNSAFE: {
    status: 400,
    message: 'path must not contain dot segments, backslashes or null bytes',
    level: 'debug',
  },
  ORIGIN_TARGET_AMBIGUOUS: {
    status: 400,
    message: 'empty path segment among outlets',
    level: 'debug',
  },
  ORIGIN_METHOD_NOT_ALLOWED: { status: 405, message: 'Method Not Allowed', level: 'debug' },
  // Renders (pages/).
  ORIGIN_OVERLOADED: { status: 503, message: 'shedding load: render queue full', level: 'warn' },
  ORIGIN_RENDER_FAILED: { status: 500, message: 'request failed', level: 'error' },
  ORIGIN_RENDER_NO_PAGE: {
    status: 500,
    message: "Angular's engine rendered no page for %s: its navigation failed",
    level: 'error',
  },
  ORIGIN_RENDER_TIMEOUT: {
    message: 'render timed out: answered with the client-side shell',
    level: 'warn',
  },
  ORIGIN_RENDER_CONSOLE: { message: 'the app wrote to the console while rendering', level: 'warn' },
  // Personal parts (personal/): each failure leaves the part's placeholder in the page.
  ORIGIN_PART_FAILED: {
    message: 'personal part "%s" failed to render: its placeholder was sent',
    level: 'warn',
  },
  ORIGIN_PART_TIMEOUT: {
    message: 'personal part "%s" took longer than its timeoutMs: its placeholder was sent',
    level: 'warn',
  },
  ORIGIN_PART_MARKUP: {
    message:
      'the page of %s has personal parts the origin cannot fill: %s; it is served shared, placeholders and all',
    level: 'warn',
  },
  ORIGIN_PART_NOT_FOUND: {
    status: 404,
    message: 'no such personal part',
    level: 'debug',
  },
  ORIGIN_UNDECLARED_INPUT: {
    status: 500,
    message:
      '/%s read %s, which its route does not declare: its shared page sees nothing there%s — ' +
      'declare it with renderInputs() in app.routes.server.ts, mark the route private, or read it ' +
      'in the browser',
    level: 'warn',
  },
  ORIGIN_ROUTE_UNREADABLE: {
    message: 'route %s: its No-Vary-Search does not parse, so its query strings are never cached',
    level: 'warn',
  },
  // Caches and data (cache/, data-cache/, redis/).
  ORIGIN_CACHE_REFRESH_FAILED: {
    message: '%s: a refresh failed, the stale entry is served meanwhile',
    level: 'warn',
  },
  ORIGIN_REDIS_UNAVAILABLE: {
    message: 'shared cache: Redis unavailable, serving from this process and rendering meanwhile',
    level: 'warn',
  },
  ORIGIN_DATA_UPSTREAM_FAILED: {
    message: "a render's API answered 5xx or did not answer",
    level: 'warn',
  },
  ORIGIN_DATA_TOO_LARGE: {
    message: 'an API answer over DATA_CACHE_MAX_ENTRY_BYTES, passed on',
    level: 'debug',
  },
  // Revalidation (revalidation/).
  ORIGIN_REVALIDATE_UNAUTHORIZED: { status: 401, message: 'Unauthorized', level: 'debug' },
  ORIGIN_REVALIDATE_INVALID: {
    status: 400,
    message: 'invalid revalidation request%s',
    level: 'warn',
  },
  ORIGIN_REVALIDATE_CHANNEL_FAILED: { message: 'revalidation: a channel failed', level: 'warn' },
  ORIGIN_CDN_PURGE_FAILED: { message: 'CDN purge: some items failed', level: 'warn' },
  // The app's own API (app-api/).
  ORIGIN_API_FAILED: { status: 500, message: 'the app api failed%s', level: 'error' },
  // Responses, processes and the start (origin.ts, process/, server.ts).
  ORIGIN_RESPONSE_FAILED: { message: 'response error', level: 'warn' },
  ORIGIN_GRACE_EXCEEDED: { message: 'grace period over: %s', level: 'error' },
  ORIGIN_FATAL: { message: '%s, then exiting 1', level: 'fatal' },
  ORIGIN_WORKER_EXITED: { message: 'worker exited%s', level: 'warn' },
  ORIGIN_CANNOT_START: { message: 'Cannot start: %s', level: 'fatal', counted: false },
  // The sentence node-range.ts makes of the versions: which Node, which range, what to do.
  ORIGIN_NODE_OUT_OF_RANGE: { message: '%s', level: 'warn' },
  ORIGIN_METRICS_FAILED: { message: 'metrics: could not collect', level: 'warn' },
  ORIGIN_ASSET_ARCHIVE_FAILED: {
    message: 'asset archive: publishing failed, retrying',
    level: 'warn',
  },
  // Tracing (observe/tracing/).
  ORIGIN_TRACES_EXPORT_FAILED: { message: 'tracing: exporting spans failed', level: 'warn' },
  ORIGIN_TRACES_DROPPED: {
    message: 'tracing: spans dropped, the export queue was full',
    level: 'warn',
  },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERRORS;

/** Requests refused before any route was looked at: their paths name nothing of the app's. */
export const REFUSED_BEFORE_ROUTING: ReadonlySet<string> = new Set<ErrorCode>([
  'ORIGIN_URI_TOO_LONG',
  'ORIGIN_TARGET_NOT_A_PATH',
  'ORIGIN_HOST_DUPLICATE',
  'ORIGIN_HOST_MALFORMED',
  'ORIGIN_HOST_REJECTED',
  'ORIGIN_TARGET_MALFORMED',
  'ORIGIN_TARGET_UNSAFE',
  'ORIGIN_TARGET_AMBIGUOUS',
]);

/** A code's message with its `%s` filled, in order, by `args`. */
export function messageOf(code: ErrorCode, ...args: readonly (string | number)[]): string {
  let next = 0;
  return ERRORS[code].message.replace(/%s/g, () => String(args[next++] ?? ''));
}

/**
 * A failure that answers a request: its code's status, its message (a 4xx says it: `expose`).
 * Thrown by a step; the error handler answers it and says it happened (errorHappened).
 */
export class OriginError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;

  constructor(code: ErrorCode, ...args: readonly (string | number)[]) {
    super(messageOf(code, ...args));
    this.code = code;
    this.status = (ERRORS[code] as ErrorKind).status ?? 500;
    this.expose = this.status < 500;
  }

  /** The text of its 4xx answer: the status's reason, then the message (`Bad Request: host not allowed`). */
  get answerText(): string {
    const reason = STATUS_CODES[this.status] ?? '';
    return this.message === reason ? reason : `${reason}: ${this.message}`;
  }
}

/** What report() logs on: any of the origin's loggers (pino's), or a test's with these levels. */
export type FailureLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error' | 'fatal'>;

/** What a failure happened to: the response of the request it failed (when one did), the error. */
export interface FailureContext {
  res?: ServerResponse;
  error?: unknown;
}

/**
 * Says that a failure of `code` happened, on the origin's error channel: counted there (unless its
 * kind says not), and on the request it concerns. For a failure that logs nothing of its own (a 4xx)
 * or whose line is throttled (logger.ts).
 */
export function errorHappened(code: ErrorCode, context: FailureContext = {}): void {
  if (channels.error.hasSubscribers && (ERRORS[code] as ErrorKind).counted !== false) {
    channels.error.publish({ code, ...context } satisfies ErrorMessage);
  }
}

/**
 * A failure the origin logs: one line at its kind's level with its code and `fields`, the table's
 * message with `args` in its `%s`; said on the error channel (errorHappened).
 */
export function report(
  log: FailureLog,
  code: ErrorCode,
  fields: Record<string, unknown> = {},
  ...args: readonly (string | number)[]
): void {
  errorHappened(code, { error: fields['err'] });
  log[(ERRORS[code] as ErrorKind).level]({ code, ...fields }, messageOf(code, ...args));
}
