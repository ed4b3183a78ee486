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
  new Primary(graceMs, log).start(workers);
}

class Primary {
  readonly #graceMs: number;
  readonly #log: Logger;
  /** The live workers, with when each started. */
  readonly #startedAt = new Map<Worker, number>();
  #draining = false;
  #exitCode = 0;
  /** Workers in a row that exited before STABLE_AFTER_MS. */
  #earlyExits = 0;

  constructor(graceMs: number, log: Logger) {
    this.#graceMs = graceMs;
    this.#log = log;
  }

  start(workers: number): void {
    cluster.on('message', (worker, message) => {
      if (message === EXITING) {
        worker.send(EXIT_OK);
      } else {
        // A worker's revalidation goes to every other worker (revalidation/cluster-channel.ts).
        relayRevalidation(worker, message, this.#startedAt.keys());
      }
    });
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    handleProcessEvents({
      stop: (reason) => this.#drain(reason),
      // Every worker empties its own render cache.
      hangup: () => this.#signalWorkers('SIGHUP'),
      // The primary's own failure: let the workers finish what they serve, then exit 1.
      crash: (kind, error) => {
        this.#exitCode = 1;
        this.#log.fatal({ err: error }, `primary: ${kind}: draining every worker, then exiting 1`);
        this.#drain(kind);
      },
    });
    this.#log.info({ workers }, `starting ${workers} workers`);
    for (let i = 0; i < workers; i++) {
      this.#fork();
    }
  }

  #fork(): void {
    this.#startedAt.set(cluster.fork(), Date.now());
  }

  #exited(worker: Worker, code: number, signal: string): void {
    const uptimeMs = Date.now() - (this.#startedAt.get(worker) ?? Date.now());
    this.#startedAt.delete(worker);
    if (this.#draining) {
      if (code !== 0) {
        this.#exitCode = 1;
      }
      if (this.#startedAt.size === 0) {
        this.#log.info({ exitCode: this.#exitCode }, 'every worker drained, exiting');
        process.exit(this.#exitCode);
      }
      return;
    }
    if (code === CANNOT_START) {
      // The worker printed why on stderr; another would fail the same way.
      this.#exitCode = 1;
      this.#drain('a worker cannot start');
      return;
    }
    this.#earlyExits = uptimeMs < STABLE_AFTER_MS ? this.#earlyExits + 1 : 0;
    const delayMs =
      this.#earlyExits === 0
        ? 0
        : Math.min(FIRST_DELAY_MS * 2 ** (this.#earlyExits - 1), MAX_DELAY_MS);
    this.#log.warn(
      { worker: worker.id, pid: worker.process.pid, code, signal, uptimeMs, delayMs },
      'worker exited: starting another',
    );
    setTimeout(() => {
      if (!this.#draining) {
        this.#fork();
      }
    }, delayMs);
  }

  #drain(reason: string): void {
    if (this.#draining) {
      return;
    }
    this.#draining = true;
    const graceMs = this.#graceMs;
    this.#log.info({ reason, workers: this.#startedAt.size, graceMs }, 'draining every worker');
    this.#signalWorkers('SIGTERM');
    if (this.#startedAt.size === 0) {
      process.exit(this.#exitCode);
    }
    // Each worker cuts its own connections at graceMs; this only catches one that hangs.
    setTimeout(() => {
      this.#log.error({ graceMs }, 'workers still running past the grace period: killing them');
      this.#signalWorkers('SIGKILL');
      process.exit(1);
    }, graceMs + 2000).unref();
  }

  #signalWorkers(signal: NodeJS.Signals): void {
    for (const worker of this.#startedAt.keys()) {
      worker.process.kill(signal);
    }
  }
}
