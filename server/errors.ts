// Every failure the origin answers or logs, by a stable name: in its log line (`code`), on its
// request's span, and in origin_errors_total{code}. docs/errors.md says what each means and what
// to do about it (a test keeps the two lists the same).

/** A failure's code, what status the origin answers it with (if it answers), and how loud it is. */
interface ErrorKind {
  /** The status of the answer it gets; undefined for failures no request is answered with. */
  status?: number;
  /** The text of a 4xx answer (after "Bad Request: ", …), or the log line's message. */
  message: string;
}

export const ERRORS = {
  // A request the origin refuses before any work (request/).
  ORIGIN_URI_TOO_LONG: { status: 414, message: 'URI Too Long' },
  ORIGIN_TARGET_NOT_A_PATH: { status: 400, message: 'request target must be a path' },
  ORIGIN_HOST_DUPLICATE: { status: 400, message: 'more than one Host header' },
  ORIGIN_HOST_MALFORMED: { status: 400, message: 'malformed host header' },
  ORIGIN_HOST_REJECTED: { status: 400, message: 'host not allowed' },
  ORIGIN_TARGET_MALFORMED: { status: 400, message: 'malformed percent-encoding' },
  ORIGIN_TARGET_UNSAFE: {
    status: 400,
    message: 'path must not contain dot segments, backslashes or null bytes',
  },
  ORIGIN_TARGET_AMBIGUOUS: { status: 400, message: 'empty path segment among outlets' },
  ORIGIN_METHOD_NOT_ALLOWED: { status: 405, message: 'Method Not Allowed' },
  // Renders (pages/).
  ORIGIN_OVERLOADED: { status: 503, message: 'shedding load: render queue full' },
  ORIGIN_RENDER_FAILED: { status: 500, message: 'request failed' },
  ORIGIN_RENDER_NO_PAGE: { status: 500, message: "Angular's engine rendered no page" },
  ORIGIN_RENDER_TIMEOUT: {
    message: 'render timed out: answered with the client-side shell',
  },
  ORIGIN_RENDER_CONSOLE: { message: 'the app wrote to the console while rendering' },
  ORIGIN_UNDECLARED_INPUT: {
    status: 500,
    message: 'a shared page read a request input its route does not declare',
  },
  // Caches and data (cache/, data-cache/, redis/).
  ORIGIN_CACHE_REFRESH_FAILED: { message: 'a refresh failed, the stale entry is served meanwhile' },
  ORIGIN_REDIS_UNAVAILABLE: { message: 'Redis unavailable: going on without the shared tier' },
  ORIGIN_DATA_UPSTREAM_FAILED: { message: "a render's API answered 5xx or did not answer" },
  ORIGIN_DATA_TOO_LARGE: { message: 'an API answer over DATA_CACHE_MAX_ENTRY_BYTES, passed on' },
  // Revalidation (revalidation/).
  ORIGIN_REVALIDATE_UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  ORIGIN_REVALIDATE_INVALID: { status: 400, message: 'invalid revalidation request' },
  ORIGIN_REVALIDATE_CHANNEL_FAILED: { message: 'revalidation: a channel failed' },
  ORIGIN_CDN_PURGE_FAILED: { message: 'CDN purge failed' },
  // The app's own API (app-api/).
  ORIGIN_API_FAILED: { status: 500, message: 'the app api failed' },
  // Responses, processes and the start (origin.ts, process/, server.ts).
  ORIGIN_RESPONSE_FAILED: { message: 'response error' },
  ORIGIN_GRACE_EXCEEDED: { message: 'grace period over: closing remaining connections' },
  ORIGIN_FATAL: { message: 'uncaught error: draining, then exiting 1' },
  ORIGIN_WORKER_EXITED: { message: 'worker exited: starting another' },
  ORIGIN_CANNOT_START: { message: 'cannot start' },
  ORIGIN_NODE_OUT_OF_RANGE: { message: 'Node is outside the range Angular declares' },
  ORIGIN_ROUTE_UNREADABLE: { message: 'route: unreadable No-Vary-Search, ignored' },
  ORIGIN_METRICS_FAILED: { message: 'metrics: could not collect' },
  ORIGIN_ASSET_ARCHIVE_FAILED: { message: 'asset archive: publishing failed' },
  // Tracing (observe/tracing/).
  ORIGIN_TRACES_EXPORT_FAILED: { message: 'tracing: exporting spans failed' },
  ORIGIN_TRACES_DROPPED: { message: 'tracing: spans dropped, the export queue was full' },
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

/** An error that answers a request with its kind's status (a 4xx says its message: `expose`). */
export class OriginError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;

  constructor(code: ErrorCode, message: string = ERRORS[code].message) {
    super(message);
    this.code = code;
    this.status = (ERRORS[code] as ErrorKind).status ?? 500;
    this.expose = this.status < 500;
  }
}

/** How often each code came up in this process, for /healthz and origin_errors_total. */
export const errorCounts = new Map<ErrorCode, number>();

/** Counts one failure; returns its code, for the log line it goes in (`{ code: noted(…) }`). */
export function noted(code: ErrorCode): ErrorCode {
  errorCounts.set(code, (errorCounts.get(code) ?? 0) + 1);
  return code;
}
