import { OriginError } from '../errors.ts';

/** Thrown when every render slot is busy and the queue is full: the request is shed with 503. */
export class OverloadedError extends OriginError {
  constructor() {
    super('ORIGIN_OVERLOADED');
  }
}

interface Waiter {
  start: () => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/** How many renders run at once and how many wait (MAX_CONCURRENT_RENDERS, RENDER_QUEUE_LIMIT). */
export interface RenderLimits {
  /** Renders running at once; more wait in the queue. */
  maxRunning: number;
  /** Renders waiting for a slot; more are shed with 503. */
  maxQueued: number;
}

/** Longest a freed slot waits for its cohort while requests queue (see RenderLimiter). */
export const COHORT_WAIT_MS = 10;

/**
 * Bounds the renders running at once and the renders waiting for a slot. A render keeps its slot
 * until it settles, even after its request timed out or its client left, so slow renders cannot
 * pile up behind the backs of the requests that gave up on them.
 *
 * While requests queue, waiting ones start in cohorts: a freed slot is filled once all but a
 * quarter of the slots are free (or after COHORT_WAIT_MS), not the moment it frees: handing each
 * freed slot straight on cost more server CPU per render than unbounded renders, cohorts less
 * (docs/architecture.md#what-each-optimization-saves).
 */
export class RenderLimiter {
  #running = 0;
  readonly #queue: Waiter[] = [];
  /** Background renders (cache refreshes): a slot goes to them only when no request waits. */
  readonly #backgroundQueue: (() => void)[] = [];
  readonly #maxRunning: number;
  readonly #maxQueued: number;
  /** Queued requests start once no more than this many renders run (a quarter of the slots). */
  readonly #cohortAt: number;
  /** Fills the free slots COHORT_WAIT_MS after the first freed one, when the cohort is late. */
  #cohortTimer: NodeJS.Timeout | undefined;

  constructor({ maxRunning, maxQueued }: RenderLimits) {
    this.#maxRunning = maxRunning;
    this.#maxQueued = maxQueued;
    this.#cohortAt = Math.floor(maxRunning / 4);
  }

  get stats(): { running: number; queued: number; backgroundQueued: number } {
    return {
      running: this.#running,
      queued: this.#queue.length,
      backgroundQueued: this.#backgroundQueue.length,
    };
  }

  /** Runs `task` when a slot is free. Rejects with OverloadedError or the signal's reason instead. */
  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    // Behind requests that already wait (for their cohort), never ahead of them.
    if (this.#running >= this.#maxRunning || this.#queue.length > 0) {
      await this.#waitForSlot(signal);
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  /**
   * Runs `task` when a slot is free and no request is waiting for one, so background work never
   * delays a request. At most as many wait as requests may; past that it is refused (OverloadedError).
   */
  async runInBackground<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#maxRunning || this.#queue.length > 0) {
      if (this.#backgroundQueue.length >= this.#maxQueued) {
        throw new OverloadedError();
      }
      await new Promise<void>((resolve) => this.#backgroundQueue.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #waitForSlot(signal: AbortSignal): Promise<void> {
    if (this.#queue.length >= this.#maxQueued && this.#running < this.#maxRunning) {
      // A full queue with a slot held for the cohort: the cohort starts now rather than shed.
      this.#startCohort();
    }
    if (this.#queue.length >= this.#maxQueued) {
      return Promise.reject(new OverloadedError());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        signal,
        start: () => {
          signal.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        // A client that leaves while queued costs nothing more: it never gets a slot.
        onAbort: () => {
          this.#queue.splice(this.#queue.indexOf(waiter), 1);
          reject(signal.reason as Error);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #release(): void {
    this.#running--;
    // With no request waiting, free slots go straight to background work, if any.
    if (this.#queue.length === 0 || this.#running <= this.#cohortAt) {
      this.#startCohort();
    } else {
      this.#cohortTimer ??= setTimeout(() => this.#startCohort(), COHORT_WAIT_MS);
    }
  }

  /** Fills every free slot from the queue, requests first; background work when none wait. */
  #startCohort(): void {
    clearTimeout(this.#cohortTimer);
    this.#cohortTimer = undefined;
    while (this.#running < this.#maxRunning) {
      const next = this.#queue.shift()?.start ?? this.#backgroundQueue.shift();
      if (!next) {
        return;
      }
      this.#running++;
      next();
    }
  }
}
