import type { Logger } from 'pino';
import { exitProcess } from './cluster.ts';
import type { Readiness } from './health.ts';
import type { PublicServer, TlsFiles } from './public-server.ts';
import type { RecycleLimits } from './recycling.ts';
import { handleProcessEvents } from './signals.ts';
import { noted } from '../errors.ts';

/** Where the public port listens (PORT, HOST), and with TLS_CERT and TLS_KEY, over HTTPS and HTTP/2. */
export interface ListenAddress {
  port: number;
  /** Interface to bind; undefined binds every interface, like Node's default. */
  host: string | undefined;
  /** The certificate and key; undefined: plain HTTP/1.1. */
  tls: TlsFiles | undefined;
}

/**
 * How many processes serve, how long a stop may take, and when a worker is replaced (WORKERS,
 * SHUTDOWN_GRACE_MS, MAX_REQUESTS, MAX_REQUESTS_JITTER, MAX_RSS_MB).
 */
export interface ProcessSettings {
  /**
   * 1 serves in this process, unless `recycle` is set; more, or any with `recycle`, run under a
   * supervising primary (cluster.ts).
   */
  workers: number;
  /** After SIGTERM/SIGINT or a recycle, how long in-flight requests may take before connections are cut. */
  shutdownGraceMs: number;
  /** Undefined: a worker lives until it exits by itself. */
  recycle: RecycleLimits | undefined;
}

/** The longest the last spans may take to go out once drained. */
const BEFORE_EXIT_MS = 2000;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** After an uncaught error, in-flight requests get at most this long (or SHUTDOWN_GRACE_MS if shorter). */
const FATAL_GRACE_MS = 5000;

export interface LifecycleOptions {
  readiness: Readiness;
  log: Logger;
  graceMs: number;
  /** SIGHUP: empty what the process caches. */
  onHangup: () => void;
  /** What must go out once drained, before the process exits (buffered spans), bounded in time. */
  beforeExit?: () => Promise<void>;
}

/** How a serving process can be stopped from inside (a recycle: process/recycling.ts). */
export interface Serving {
  /** Drains as on SIGTERM, but leaves each HTTP/1.1 connection to its next answer (`retire`). */
  readonly retire: () => void;
}

/**
 * A serving process (alone or a cluster worker) until it stops. SIGTERM/SIGINT: stop accepting,
 * let in-flight requests finish within the grace period, exit 0; past the grace period, cut the
 * remaining connections and exit 1. Uncaught errors: the process may be in a bad state, so it
 * drains the same way within a short grace and exits 1 for a supervisor to restart it; one faulty
 * render does not cost every concurrent visitor their page. A recycle drains like SIGTERM, but
 * closes no idle connection: its replacement already serves, so there is no hurry, and an idle
 * keep-alive connection closed by the server races the client's next request on it.
 */
export function serveUntilStopped(
  server: PublicServer,
  { readiness, log, graceMs, onHangup, beforeExit }: LifecycleOptions,
): Serving {
  let exitCode = 0;
  const drain = (reason: string, graceForThis: number, gently = false) => {
    if (!readiness.ready) {
      return;
    }
    readiness.ready = false;
    log.info(
      { reason, graceMs: graceForThis },
      'draining: no new connections, finishing in-flight requests',
    );
    const drained = () => {
      log.info({ exitCode }, 'drained, exiting');
      if (beforeExit === undefined) {
        exitProcess(exitCode);
        return;
      }
      void Promise.race([beforeExit().catch(() => undefined), delay(BEFORE_EXIT_MS)]).then(() =>
        exitProcess(exitCode),
      );
    };
    if (gently) {
      server.retire(drained);
    } else {
      server.drain(drained);
      // Keep-alive connections that finish their last response while we drain would otherwise idle
      // until keepAliveTimeout: close each as soon as it is idle.
      setInterval(() => server.closeIdle(), 50).unref();
    }
    setTimeout(() => {
      log.error(
        { code: noted('ORIGIN_GRACE_EXCEEDED'), graceMs: graceForThis },
        'grace period over: closing remaining connections',
      );
      server.closeAll();
      process.exit(1);
    }, graceForThis).unref();
  };
  handleProcessEvents({
    stop: (reason) => drain(reason, graceMs),
    hangup: onHangup,
    crash: (kind, error) => {
      exitCode = 1;
      const draining = !readiness.ready;
      log.fatal(
        { code: noted('ORIGIN_FATAL'), err: error },
        draining
          ? `${kind} while draining: exiting 1 once drained`
          : `${kind}: draining in-flight requests, then exiting 1`,
      );
      drain(kind, Math.min(graceMs, FATAL_GRACE_MS));
    },
  });
  return { retire: () => drain('recycle', graceMs, true) };
}
