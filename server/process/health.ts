import type { Middleware } from 'koa';
import { closeAfterAnswer } from '../http/connection.ts';

/** Whether the process should get traffic; false once it started draining. */
export interface Readiness {
  ready: boolean;
}

/** Paths healthEndpoints answers, whatever else the origin serves. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/**
 * `GET /healthz`: the process is alive (for restarts), with its counters. `GET /readyz`: it wants
 * traffic (for load balancers); 503 while draining. Answered before the host check, since probes
 * often use an IP address as host.
 */
export function healthEndpoints(readiness: Readiness, stats: () => object): Middleware {
  return (ctx, next) => {
    if (!readiness.ready) {
      // Keep-alive clients are told to reconnect elsewhere once this answer is sent.
      closeAfterAnswer(ctx);
    }
    if (HEALTH_PATHS.has(ctx.path)) {
      const up = ctx.path === '/healthz' || readiness.ready;
      ctx.status = up ? 200 : 503;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: up ? 'ok' : 'draining', ready: readiness.ready, ...stats() };
      return;
    }
    return next();
  };
}
