// How often each failure came up in this process (errors.ts), for /healthz and origin_errors_total:
// a subscriber of the error channel like any other observer, on from the start.
import type { ErrorCode } from '../errors.ts';
import { channels, type ErrorMessage } from '../channels.ts';

const counts = new Map<ErrorCode, number>();
let counting = false;

/** The counts by code, counted from the first call on. */
export function errorCounts(): ReadonlyMap<ErrorCode, number> {
  if (!counting) {
    counting = true;
    channels.error.subscribe((message) => {
      const code = (message as ErrorMessage).code as ErrorCode;
      counts.set(code, (counts.get(code) ?? 0) + 1);
    });
  }
  return counts;
}
