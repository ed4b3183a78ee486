import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { createRevalidationRelay } from '../revalidation/cluster-channel.ts';
import type { ProcessSettings } from './lifecycle.ts';
import { EXIT_OK, EXITING, SLOT, STOP_ACCEPTING } from './worker.ts';
import { isReplaceMe, RECYCLE_REASONS, type RecycleReason, RETIRE } from './recycling.ts';
import { handleProcessEvents } from './signals.ts';
import { report } from '../errors.ts';

/**
 * Whether the origin runs as a primary and its workers: with WORKERS above 1, and with a recycle
 * limit whatever WORKERS is, since a replacement must listen before the worker it replaces stops
 * (Kubernetes restarts a lone process in place, with nothing listening meanwhile).
 */
export function runsPrimary(settings: ProcessSettings): boolean {
  return settings.workers > 1 || settings.recycle !== undefined;
}

/** A worker's exit code when it cannot start (e.g. the port is taken): restarting cannot help. */
export const CANNOT_START = 78;

/** A worker that lived less than this before exiting counts as a crash loop. */
const STABLE_AFTER_MS = 10_000;
/** Restart delays double from the first to the last while workers keep crashing early. */
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 30_000;
/**
 * A worker exits by itself within SHUTDOWN_GRACE_MS (after its drain window, on a stop); past this
 * much more, it is killed.
 */
export const KILL_AFTER_GRACE_MS = 2000;

/** What the primary did to its workers, for its metrics. */
export interface PrimaryStats {
  /** Workers replaced because they reached a recycle limit, by limit. */
  recycles: Record<RecycleReason, number>;
  /** Workers replaced because they exited unexpectedly. */
  restarts: number;
}

export interface Primary {
  /** Forks the workers and supervises them until the primary is told to stop. */
  start(): void;
  readonly stats: PrimaryStats;
}

/**
 * The primary of `WORKERS` processes (node:cluster): they share the port, the primary only
 * supervises. A worker that exits unexpectedly is replaced, at once if it had been up a while,
 * else after a delay that doubles while workers keep dying early, so a crash at startup does not
 * spin. A worker that reaches a recycle limit is replaced first and retired after: its replacement
 * is forked, and once it listens the old worker drains and exits (one recycle at a time, so a pod
 * holds one process more than WORKERS at most); recycles never count as crashes. SIGTERM/SIGINT
 * drain every worker (each serves on for its drain window, then finishes its in-flight requests, as
 * one process does) and exit 0, or 1 if a worker did not exit cleanly or past the grace period.
 */
export function createPrimary(settings: ProcessSettings, log: Logger): Primary {
  return new Supervisor(settings, log);
}

interface WorkerState {
  /** 1 to WORKERS, kept by the worker that replaces it. */
  slot: number;
  startedAt: number;
  /** Its public server listens: the primary hands it connections. */
  listening: boolean;
}

/** A worker being replaced; `retiring` once its replacement listens and it was told to drain. */
interface Recycle {
  worker: Worker;
  reason: RecycleReason;
  retiring: boolean;
  killTimer?: NodeJS.Timeout;
}

class Supervisor implements Primary {
  readonly stats: PrimaryStats = {
    recycles: Object.fromEntries(RECYCLE_REASONS.map((reason) => [reason, 0])) as Record<
      RecycleReason,
      number
    >,
    restarts: 0,
  };
  readonly #settings: ProcessSettings;
  readonly #log: Logger;
  /** The live workers. */
  readonly #workers = new Map<Worker, WorkerState>();
  #draining = false;
  #exitCode = 0;
  /** Workers in a row that exited unexpectedly before STABLE_AFTER_MS. */
  #earlyExits = 0;
  /** The recycle under way, one at a time: each needs room for one more process. */
  #recycle: Recycle | undefined;
  /** Workers due for a recycle after the one under way, in the order they asked. */
  #due: { worker: Worker; reason: RecycleReason }[] = [];

  constructor(settings: ProcessSettings, log: Logger) {
    this.#settings = settings;
    this.#log = log;
  }

  start(): void {
    const relayRevalidation = createRevalidationRelay();
    cluster.on('message', (worker, message) => {
      if (message === EXITING) {
        worker.send(EXIT_OK);
      } else if (isReplaceMe(message)) {
        this.#replace(worker, message.reason);
      } else {
        // A worker's revalidation goes to every other worker, and their word that they applied it
        // back to it (revalidation/cluster-channel.ts).
        relayRevalidation(worker, message, this.#workers.keys());
      }
    });
    cluster.on('listening', (worker) => this.#listening(worker));
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    handleProcessEvents({
      stop: (reason) => this.#stop(reason),
      // Every worker empties its own render cache.
      hangup: () => this.#signalWorkers('SIGHUP'),
      // The primary's own failure: let the workers finish what they serve, then exit 1.
      crash: (kind, error) => {
        this.#exitCode = 1;
        report(
          this.#log,
          'ORIGIN_FATAL',
          { err: error },
          `primary: ${kind}: draining every worker`,
        );
        this.#drain(kind);
      },
    });
    const { workers, recycle } = this.#settings;
    this.#log.info(
      { workers, recycle },
      `starting ${workers} ${workers === 1 ? 'worker' : 'workers'}`,
    );
    for (let slot = 1; slot <= workers; slot++) {
      this.#fork(slot);
    }
  }

  #fork(slot: number): void {
    const worker = cluster.fork({ [SLOT]: String(slot) });
    this.#workers.set(worker, { slot, startedAt: Date.now(), listening: false });
  }

  #listening(worker: Worker): void {
    const state = this.#workers.get(worker);
    if (state) {
      state.listening = true;
      this.#retireIfReplaced(worker);
    }
  }

  /** A worker asked to be replaced: queued, then replaced when its turn comes. */
  #replace(worker: Worker, reason: RecycleReason): void {
    const known =
      this.#recycle?.worker === worker || this.#due.some((due) => due.worker === worker);
    if (this.#draining || !this.#workers.has(worker) || known) {
      return;
    }
    this.#due.push({ worker, reason });
    this.#nextRecycle();
  }

  #nextRecycle(): void {
    if (this.#recycle !== undefined || this.#draining) {
      return;
    }
    const next = this.#due.shift();
    if (next === undefined) {
      return;
    }
    this.#recycle = { ...next, retiring: false };
    const { slot } = this.#workers.get(next.worker)!;
    this.#log.info(
      { worker: next.worker.id, pid: next.worker.process.pid, slot, reason: next.reason },
      'recycling a worker: starting its replacement',
    );
    this.#fork(slot);
  }

  /** Once WORKERS others listen (its replacement among them), the worker being replaced drains. */
  #retireIfReplaced(listened: Worker): void {
    const recycle = this.#recycle;
    if (recycle === undefined || recycle.retiring) {
      return;
    }
    let others = 0;
    for (const [worker, { listening }] of this.#workers) {
      others += worker !== recycle.worker && listening ? 1 : 0;
    }
    if (others < this.#settings.workers) {
      return;
    }
    recycle.retiring = true;
    const { worker } = recycle;
    this.#log.info(
      {
        worker: worker.id,
        pid: worker.process.pid,
        reason: recycle.reason,
        replacement: listened.process.pid,
      },
      'recycling a worker: its replacement listens, draining it',
    );
    worker.send(RETIRE);
    // PM2's kill_timeout: it should have exited by itself at SHUTDOWN_GRACE_MS.
    recycle.killTimer = setTimeout(
      () => worker.process.kill('SIGKILL'),
      this.#settings.shutdownGraceMs + KILL_AFTER_GRACE_MS,
    );
  }

  #exited(worker: Worker, code: number, signal: string): void {
    const state = this.#workers.get(worker);
    const uptimeMs = Date.now() - (state?.startedAt ?? Date.now());
    this.#workers.delete(worker);
    this.#due = this.#due.filter((due) => due.worker !== worker);
    if (this.#draining) {
      // A worker still starting has nothing in flight: SIGTERM ending it is a clean stop (a
      // replacement often is, with recycling).
      const stoppedStarting = signal === 'SIGTERM' && state?.listening === false;
      if (code !== 0 && !stoppedStarting) {
        this.#exitCode = 1;
      }
      if (this.#workers.size === 0) {
        this.#log.info({ exitCode: this.#exitCode }, 'every worker drained, exiting');
        process.exit(this.#exitCode);
      }
      return;
    }
    const exit = { worker: worker.id, pid: worker.process.pid, exitCode: code, signal, uptimeMs };
    if (this.#recycle?.worker === worker) {
      this.#recycled(this.#recycle, exit);
      return;
    }
    if (code === CANNOT_START) {
      // The worker printed why on stderr; another would fail the same way.
      this.#exitCode = 1;
      this.#drain('a worker cannot start');
      return;
    }
    this.stats.restarts++;
    this.#earlyExits = uptimeMs < STABLE_AFTER_MS ? this.#earlyExits + 1 : 0;
    const delayMs =
      this.#earlyExits === 0
        ? 0
        : Math.min(FIRST_DELAY_MS * 2 ** (this.#earlyExits - 1), MAX_DELAY_MS);
    report(this.#log, 'ORIGIN_WORKER_EXITED', { ...exit, delayMs }, ': starting another');
    const slot = state?.slot ?? 1;
    setTimeout(() => {
      if (!this.#draining) {
        this.#fork(slot);
      }
    }, delayMs);
  }

  /**
   * The worker being replaced exited. Its replacement is already there or on its way (a crashing
   * replacement is restarted as any worker is), so nothing is forked; the restart backoff is left
   * alone, since a worker that reached its limit did not crash, however young.
   */
  #recycled(recycle: Recycle, exit: object): void {
    clearTimeout(recycle.killTimer);
    this.#recycle = undefined;
    if (recycle.retiring) {
      this.stats.recycles[recycle.reason]++;
      this.#log.info({ ...exit, reason: recycle.reason }, 'worker recycled');
    } else {
      this.stats.restarts++;
      report(
        this.#log,
        'ORIGIN_WORKER_EXITED',
        { ...exit, reason: recycle.reason },
        ' while its replacement was starting',
      );
    }
    this.#nextRecycle();
  }

  /** SIGTERM/SIGINT: drain every worker; a second signal ends their drain windows at once. */
  #stop(reason: string): void {
    if (!this.#draining) {
      this.#drain(reason);
      return;
    }
    this.#log.info({ reason }, 'told to stop again: every worker stops accepting now');
    for (const worker of this.#workers.keys()) {
      if (worker.isConnected()) {
        worker.send(STOP_ACCEPTING);
      }
    }
  }

  #drain(reason: string): void {
    if (this.#draining) {
      return;
    }
    this.#draining = true;
    const { drainWindowMs, shutdownGraceMs: graceMs } = this.#settings;
    this.#log.info(
      { reason, workers: this.#workers.size, drainWindowMs, graceMs },
      'draining every worker',
    );
    // Each worker serves on for the drain window, then drains (lifecycle.ts).
    this.#signalWorkers('SIGTERM');
    if (this.#workers.size === 0) {
      process.exit(this.#exitCode);
    }
    // Each worker cuts its own connections at graceMs after its window; this only catches one that
    // hangs.
    setTimeout(
      () => {
        report(
          this.#log,
          'ORIGIN_GRACE_EXCEEDED',
          { graceMs },
          'killing the workers still running',
        );
        this.#signalWorkers('SIGKILL');
        process.exit(1);
      },
      drainWindowMs + graceMs + KILL_AFTER_GRACE_MS,
    ).unref();
  }

  #signalWorkers(signal: NodeJS.Signals): void {
    for (const worker of this.#workers.keys()) {
      worker.process.kill(signal);
    }
  }
}
