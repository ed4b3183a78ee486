import type { Context } from 'koa';

/** Why a render was given up; compared by identity. */
export const TIMED_OUT = new Error('render timed out');
export const CLIENT_GONE = new Error('client closed the connection');

/**
 * One controller per request, aborted by the deadline or by the client leaving; its timer is
 * cleared (settle) as soon as the render settles (AbortSignal.timeout would keep one per render
 * alive for the whole timeout, and AbortSignal.any adds weak-ref bookkeeping per render).
 */
export function requestSignal(
  ctx: Context,
  timeoutMs: number,
): { signal: AbortSignal; settle: () => void } {
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) {
      controller.abort(CLIENT_GONE);
    }
  });
  return { signal: controller.signal, settle: () => clearTimeout(deadline) };
}

/** A render given up on may still fail later: expected, and no unhandled rejection. */
const ignoreLateFailure = () => undefined;

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. A render that
 * is abandoned this way still runs to its end (Angular cannot cancel one) and holds its limiter
 * slot until then; its late failure is expected and must not become an unhandled rejection.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(ignoreLateFailure);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(ignoreLateFailure);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
