/** Thrown when every render slot is busy and the queue is full: the request is shed with 503. */
export class OverloadedError extends Error {
  readonly status = 503;
  readonly expose = true;
  constructor() {
    super('Service Unavailable: too many renders in progress');
  }
}

interface Waiter {
  start: () => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/**
 * Bounds the renders running at once and the renders waiting for a slot. A render keeps its slot
 * until it settles, even after its request timed out or its client left, so slow renders cannot
 * pile up behind the backs of the requests that gave up on them.
 */
export class RenderLimiter {
  private running = 0;
  private readonly queue: Waiter[] = [];
  /** Background renders (cache refreshes): a slot goes to them only when no request waits. */
  private readonly backgroundQueue: (() => void)[] = [];
  private readonly maxRunning: number;
  private readonly maxQueued: number;

  constructor(maxRunning: number, maxQueued: number) {
    this.maxRunning = maxRunning;
    this.maxQueued = maxQueued;
  }

  get stats(): { running: number; queued: number; backgroundQueued: number } {
    return {
      running: this.running,
      queued: this.queue.length,
      backgroundQueued: this.backgroundQueue.length,
    };
  }

  /** Runs `task` when a slot is free. Rejects with OverloadedError or the signal's reason instead. */
  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    if (this.running >= this.maxRunning) {
      await this.waitForSlot(signal);
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /**
   * Runs `task` when a slot is free and no request is waiting for one, so background work never
   * delays a request. At most as many wait as requests may; past that it is refused (OverloadedError).
   */
  async runInBackground<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxRunning || this.queue.length > 0) {
      if (this.backgroundQueue.length >= this.maxQueued) {
        throw new OverloadedError();
      }
      await new Promise<void>((resolve) => this.backgroundQueue.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private waitForSlot(signal: AbortSignal): Promise<void> {
    if (this.queue.length >= this.maxQueued) {
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
          this.queue.splice(this.queue.indexOf(waiter), 1);
          reject(signal.reason as Error);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private release(): void {
    // The slot passes straight to the next request, else to background work: `running` stays the same.
    const next = this.queue.shift()?.start ?? this.backgroundQueue.shift();
    if (next) {
      next();
    } else {
      this.running--;
    }
  }
}
