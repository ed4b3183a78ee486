import type { Server } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

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

/**
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish within the grace period, exit 0.
 * If the grace period runs out, cut the remaining connections and exit 1.
 * Uncaught errors: log them and exit 1, so a supervisor restarts a clean process.
 */
export function manageLifecycle(server: Server, readiness: Readiness, log: Logger, graceMs: number): void {
  const drain = (signal: string) => {
    if (!readiness.ready) {
      return;
    }
    readiness.ready = false;
    log.info({ signal, graceMs }, 'draining: no new connections, finishing in-flight requests');
    server.close(() => {
      log.info('drained, exiting');
      process.exit(0);
    });
    // Keep-alive connections that finish their last response while we drain would otherwise idle
    // until keepAliveTimeout: close each as soon as it is idle.
    server.closeIdleConnections();
    setInterval(() => server.closeIdleConnections(), 50).unref();
    setTimeout(() => {
      log.error({ graceMs }, 'grace period over: closing remaining connections');
      server.closeAllConnections();
      process.exit(1);
    }, graceMs).unref();
  };
  process.once('SIGTERM', () => drain('SIGTERM'));
  process.once('SIGINT', () => drain('SIGINT'));

  const crash = (kind: string) => (error: unknown) => {
    log.fatal({ err: error }, kind);
    process.exit(1);
  };
  process.on('uncaughtException', crash('uncaught exception'));
  process.on('unhandledRejection', crash('unhandled rejection'));
}
