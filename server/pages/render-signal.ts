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
