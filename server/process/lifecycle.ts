import type { Logger } from 'pino';
import { exitProcess, STOP_ACCEPTING, workerSlot } from './worker.ts';
import type { Readiness } from './health.ts';
import type { PublicServer, TlsFiles } from './public-server.ts';
import type { RecycleLimits } from './recycling.ts';
import { handleProcessEvents } from './signals.ts';
import { report } from '../errors.ts';

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
  /**
   * After SIGTERM/SIGINT, how long the process keeps accepting and answering, `/readyz` at 503, so
   * that whatever balances traffic to it (a probe, Kubernetes' endpoints) stops sending it new
   * requests before it stops accepting them. Not for a recycle: the replacement listens already.
   */
  drainWindowMs: number;
  /** After the drain window, or a recycle, how long in-flight requests may take before connections are cut. */
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
  /** DRAIN_WINDOW_MS: serving on after SIGTERM/SIGINT, before the server stops accepting. */
  windowMs: number;
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
 * A serving process (alone or a cluster worker) until it stops. SIGTERM/SIGINT: `/readyz` answers
 * 503 at once, and the process serves on for the drain window, long enough for the probes and
 * endpoint lists in front of it to stop sending it traffic; then it stops accepting, lets in-flight
 * requests finish within the grace period and exits 0; past the grace period, it cuts the remaining
 * connections and exits 1. A second signal during the window ends it at once, for an operator who
 * will not wait; a cluster worker gets that from its primary instead, since signals reach a worker
 * in pairs (the primary's, and the one a terminal's Ctrl-C or systemd sends each process of the
 * group). Uncaught errors: the process may be in a bad state, so it drains at once (no window)
 * within a short grace and exits 1 for a supervisor to restart it; one faulty render does not cost
 * every concurrent visitor their page. A recycle drains at once too, and closes no idle connection:
 * its replacement already serves, so there is no hurry, and an idle keep-alive connection closed by
 * the server races the client's next request on it.
 */
export function serveUntilStopped(server: PublicServer, options: LifecycleOptions): Serving {
  const { readiness, log, windowMs, graceMs, onHangup } = options;
  const exit = { code: 0 };
  const drain = drainer(server, options, exit);
  const stop = stopAfterWindow(drain, { readiness, log, windowMs, graceMs });
  // Under the origin's primary (cluster.ts), the primary says when the window ends.
  const underPrimary = workerSlot() !== undefined;
  let signals = 0;
  handleProcessEvents({
    stop: (reason) => {
      if (++signals === 1 || !underPrimary) {
        stop(reason);
      }
    },
    hangup: onHangup,
    crash: (kind, error) => {
      exit.code = 1;
      report(
        log,
        'ORIGIN_FATAL',
        { err: error },
        readiness.ready
          ? `${kind}: draining in-flight requests`
          : `${kind} while draining: finishing in-flight requests`,
      );
      drain.start(kind, Math.min(graceMs, FATAL_GRACE_MS));
    },
  });
  if (underPrimary) {
    process.on('message', (message) => {
      if (message === STOP_ACCEPTING) {
        stop('the primary');
      }
    });
  }
  return { retire: () => drain.start('recycle', graceMs, true) };
}

/** Stopping a server once: no new connections, in-flight requests within a grace, then exit. */
interface Drainer {
  start(reason: string, graceMs: number, gently?: boolean): void;
  /** Whether it started: the server no longer accepts. */
  readonly started: boolean;
}

/**
 * Drains `server` once, however many reasons ask: stops accepting, lets in-flight requests finish
 * within the grace given, then exits with `exit.code` (what has gone wrong meanwhile); past the
 * grace, cuts what is left and exits 1. `gently`: a recycle's, which closes no idle connection.
 */
function drainer(
  server: PublicServer,
  { readiness, log, beforeExit }: LifecycleOptions,
  exit: { code: number },
): Drainer {
  let started = false;
  const drained = () => {
    log.info({ exitCode: exit.code }, 'drained, exiting');
    if (beforeExit === undefined) {
      exitProcess(exit.code);
      return;
    }
    void Promise.race([beforeExit().catch(() => undefined), delay(BEFORE_EXIT_MS)]).then(() =>
      exitProcess(exit.code),
    );
  };
  const start = (reason: string, graceMs: number, gently = false) => {
    if (started) {
      return;
    }
    started = true;
    readiness.ready = false;
    log.info({ reason, graceMs }, 'draining: no new connections, finishing in-flight requests');
    if (gently) {
      server.retire(drained);
    } else {
      server.drain(drained);
      // Keep-alive connections that finish their last response while we drain would otherwise idle
      // until keepAliveTimeout: close each as soon as it is idle.
      setInterval(() => server.closeIdle(), 50).unref();
    }
    setTimeout(() => {
      report(log, 'ORIGIN_GRACE_EXCEEDED', { graceMs }, 'closing remaining connections');
      server.closeAll();
      process.exit(1);
    }, graceMs).unref();
  };
  return {
    start,
    get started() {
      return started;
    },
  };
}

/**
 * SIGTERM/SIGINT: unready at once, serving on for the window, then draining. A stop during the window
 * ends it now; one after it changes nothing.
 */
function stopAfterWindow(
  drain: Drainer,
  {
    readiness,
    log,
    windowMs,
    graceMs,
  }: Pick<LifecycleOptions, 'readiness' | 'log' | 'windowMs' | 'graceMs'>,
): (reason: string) => void {
  let window: NodeJS.Timeout | undefined;
  return (reason) => {
    if (window === undefined && windowMs > 0 && !drain.started) {
      // Answers say `Connection: close` from now on, and the fast path stands aside (health.ts,
      // fast-path.ts): keep-alive clients reconnect, and their balancer sends them elsewhere.
      readiness.ready = false;
      log.info(
        { reason, drainWindowMs: windowMs },
        'drain window: /readyz answers 503, still serving before draining',
      );
      window = setTimeout(() => drain.start(reason, graceMs), windowMs);
      return;
    }
    if (window !== undefined && !drain.started) {
      clearTimeout(window);
      log.info({ reason }, 'drain window ended early');
    }
    drain.start(reason, graceMs);
  };
}
