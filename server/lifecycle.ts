import type { Server } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { exitProcess } from './cluster';

/** Whether the process should get traffic; false once it started draining. */
export interface Readiness {
  ready: boolean;
}

/**
 * `GET /healthz`: the process is alive (for restarts), with its render load and how many requests
 * step 0 answered (origin.ts). `GET /readyz`: it wants traffic (for load balancers); 503 while
 * draining. Answered before the host check, since probes often use an IP address as host.
 */
export function healthEndpoints(readiness: Readiness, stats: () => object): Middleware {
  return (ctx, next) => {
    if (!readiness.ready) {
      // Keep-alive clients are told to reconnect elsewhere once this answer is sent.
      ctx.set('Connection', 'close');
    }
    if (ctx.path === '/healthz' || ctx.path === '/readyz') {
      const up = ctx.path === '/healthz' || readiness.ready;
      ctx.status = up ? 200 : 503;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: up ? 'ok' : 'draining', ready: readiness.ready, ...stats() };
      return;
    }
    return next();
  };
}

/** After an uncaught error, in-flight requests get at most this long (or SHUTDOWN_GRACE_MS if shorter). */
const FATAL_GRACE_MS = 5000;

/**
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish within the grace period, exit 0.
 * If the grace period runs out, cut the remaining connections and exit 1.
 * Uncaught errors: the process may be in a bad state, so it drains the same way within a short
 * grace and exits 1 for a supervisor to restart it; one faulty render does not cost every
 * concurrent visitor their page.
 */
export function manageLifecycle(server: Server, readiness: Readiness, log: Logger, graceMs: number): void {
  let exitCode = 0;
  const drain = (reason: string, graceForThis: number) => {
    if (!readiness.ready) {
      return;
    }
    readiness.ready = false;
    log.info({ reason, graceMs: graceForThis }, 'draining: no new connections, finishing in-flight requests');
    server.close(() => {
      log.info({ exitCode }, 'drained, exiting');
      exitProcess(exitCode);
    });
    // Keep-alive connections that finish their last response while we drain would otherwise idle
    // until keepAliveTimeout: close each as soon as it is idle.
    server.closeIdleConnections();
    setInterval(() => server.closeIdleConnections(), 50).unref();
    setTimeout(() => {
      log.error({ graceMs: graceForThis }, 'grace period over: closing remaining connections');
      server.closeAllConnections();
      process.exit(1);
    }, graceForThis).unref();
  };
  process.once('SIGTERM', () => drain('SIGTERM', graceMs));
  process.once('SIGINT', () => drain('SIGINT', graceMs));

  const crash = (kind: string) => (error: unknown) => {
    exitCode = 1;
    const draining = !readiness.ready;
    log.fatal({ err: error }, draining ? `${kind} while draining: exiting 1 once drained` : `${kind}: draining in-flight requests, then exiting 1`);
    drain(kind, Math.min(graceMs, FATAL_GRACE_MS));
  };
  process.on('uncaughtException', crash('uncaught exception'));
  process.on('unhandledRejection', crash('unhandled rejection'));
}
