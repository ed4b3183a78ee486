import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { relayRevalidation } from '../revalidation/cluster-channel.ts';
import { handleProcessEvents } from './signals.ts';

/** Worker → primary: "my server is closed; tell me when you know". Primary → worker: "I know". */
const EXITING = 'origin:exiting';
const EXIT_OK = 'origin:exit-ok';

/**
 * Exits the process. A cluster worker first waits for the primary to acknowledge: the primary may
 * have handed it a connection just before it saw the worker's server close, and a worker that exits
 * with that hand-off unread loses the connection (the client hangs). Node bounces such hand-offs
 * back to the primary as they are read; the acknowledgement comes after them on the same channel.
 */
export function exitProcess(code: number): void {
  if (!cluster.isWorker || !process.send) {
    process.exit(code);
  }
  setTimeout(() => process.exit(code), 1000).unref();
  process.on('message', (message) => {
    if (message === EXIT_OK) {
      // Sent once every earlier write on the channel (the bounced hand-offs) has gone out.
      process.send!('origin:bye', () => process.exit(code));
    }
  });
  process.send(EXITING);
}

/** A worker's exit code when it cannot start (e.g. the port is taken): restarting cannot help. */
export const CANNOT_START = 78;

/** A worker that lived less than this before exiting counts as a crash loop. */
const STABLE_AFTER_MS = 10_000;
/** Restart delays double from the first to the last while workers keep crashing early. */
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 30_000;

/**
 * The primary of `WORKERS` processes (node:cluster): they share the port, the primary only
 * supervises. A worker that exits unexpectedly is replaced, at once if it had been up a while,
 * else after a delay that doubles while workers keep dying early, so a crash at startup does not
 * spin. SIGTERM/SIGINT drain every worker (each finishes its in-flight requests, as one process
 * does) and exit 0, or 1 if a worker did not exit cleanly or past the grace period.
 */
export function runPrimary(workers: number, graceMs: number, log: Logger): void {
  let draining = false;
  let exitCode = 0;
  let earlyExits = 0;
  const startedAt = new Map<Worker, number>();

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
  };

  cluster.on('message', (worker, message) => {
    if (message === EXITING) {
      worker.send(EXIT_OK);
    } else {
      // A worker's revalidation goes to every other worker (revalidation/cluster-channel.ts).
      relayRevalidation(worker, message, startedAt.keys());
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const uptimeMs = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    if (draining) {
      if (code !== 0) {
        exitCode = 1;
      }
      if (startedAt.size === 0) {
        log.info({ exitCode }, 'every worker drained, exiting');
        process.exit(exitCode);
      }
      return;
    }
    if (code === CANNOT_START) {
      // The worker printed why on stderr; another would fail the same way.
      exitCode = 1;
      drain('a worker cannot start');
      return;
    }
    earlyExits = uptimeMs < STABLE_AFTER_MS ? earlyExits + 1 : 0;
    const delayMs =
      earlyExits === 0 ? 0 : Math.min(FIRST_DELAY_MS * 2 ** (earlyExits - 1), MAX_DELAY_MS);
    log.warn(
      { worker: worker.id, pid: worker.process.pid, code, signal, uptimeMs, delayMs },
      'worker exited: starting another',
    );
    setTimeout(() => {
      if (!draining) {
        fork();
      }
    }, delayMs);
  });

  const drain = (reason: string) => {
    if (draining) {
      return;
    }
    draining = true;
    log.info({ reason, workers: startedAt.size, graceMs }, 'draining every worker');
    for (const worker of startedAt.keys()) {
      worker.process.kill('SIGTERM');
    }
    if (startedAt.size === 0) {
      process.exit(exitCode);
    }
    // Each worker cuts its own connections at graceMs; this only catches one that hangs.
    setTimeout(() => {
      log.error({ graceMs }, 'workers still running past the grace period: killing them');
      for (const worker of startedAt.keys()) {
        worker.process.kill('SIGKILL');
      }
      process.exit(1);
    }, graceMs + 2000).unref();
  };
  handleProcessEvents({
    stop: drain,
    // Every worker empties its own render cache.
    hangup: () => {
      for (const worker of startedAt.keys()) {
        worker.process.kill('SIGHUP');
      }
    },
    // The primary's own failure: let the workers finish what they serve, then exit 1.
    crash: (kind, error) => {
      exitCode = 1;
      log.fatal({ err: error }, `primary: ${kind}: draining every worker, then exiting 1`);
      drain(kind);
    },
  });

  log.info({ workers }, `starting ${workers} workers`);
  for (let i = 0; i < workers; i++) {
    fork();
  }
}
