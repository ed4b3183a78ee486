/** A promise given up on may still fail later: expected, and no unhandled rejection. */
const ignoreLateFailure = () => undefined;

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. What `promise`
 * stands for goes on to its end (Angular cannot cancel a render, a coalesced render has others
 * waiting); its late failure is expected and must not become an unhandled rejection.
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
