import { pino, type Logger } from 'pino';
import { type ErrorCode, errorHappened, type FailureContext, messageOf } from './errors.ts';

export interface LogSettings {
  /** LOG_LEVEL: pino's level names. */
  level: string;
  /** ACCESS_LOG: one line per request (off by default: it costs throughput). */
  access: boolean;
}

/**
 * JSON lines on stdout, one per event: what log collectors expect from a container. Written
 * synchronously, so the line that explains an exit is never lost to process.exit().
 */
export function createLogger(level: string): Logger {
  return pino(
    { level, timestamp: pino.stdTimeFunctions.isoTime, mixin: () => contextFields() },
    pino.destination({ dest: 1, sync: true }),
  );
}

// A new object each time: pino merges a line's fields into the mixin's object.
let contextFields: () => object = () => ({});

/**
 * What every line gets from where it is logged: the trace and span ids of the traced request it
 * is logged for (observe/tracing/), read from the active span as pino's mixin, since a bundled app
 * cannot be patched without a loader. The line's own fields win over these. `fields` returns a new
 * object each time: pino merges the line into it.
 */
export function logContextFrom(fields: () => object): void {
  contextFields = fields;
}

/**
 * Says each failure of `code` (errors.ts) happened, and logs it at most once per interval, with
 * the count since the previous line and its table's message (`args` in its `%s`): under overload
 * every request could time out or be shed, and a line each would flood the logs.
 */
export function throttledWarning(
  log: Logger,
  code: ErrorCode,
  { intervalMs = 1000, args = [] }: { intervalMs?: number; args?: readonly string[] } = {},
): (context?: FailureContext) => void {
  let count = 0;
  let timer: NodeJS.Timeout | undefined;
  const message = messageOf(code, ...args);
  const flush = () => {
    timer = undefined;
    if (count > 0) {
      log.warn({ code, count }, message);
      count = 0;
    }
  };
  return (context) => {
    errorHappened(code, context);
    count++;
    if (timer === undefined) {
      // The first event of a burst is logged at once; the rest are summed up once per interval.
      flush();
      timer = setTimeout(flush, intervalMs).unref();
    }
  };
}
