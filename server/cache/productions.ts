// The productions of a cache in flight, by key (a page's render, an API's answer): one per key
// however many ask at once, each asker waiting no longer than its own signal, and one nobody waits
// for any more aborted. A production that began before a revalidation of its key is not joined
// (`joinable`): what it makes may be out of date, so a new asker starts another.
import { untilAborted } from '../until-aborted.ts';

/** A production for a key and the askers waiting for it. */
interface Flight<T> {
  result: Promise<T>;
  controller: AbortController;
  /** Askers still waiting; Infinity for a background refresh, which nothing aborts. */
  waiters: number;
  /** When it began (the cache's clock): a revalidation after this may postdate what it read. */
  startedAt: number;
}

export interface ProductionsOptions {
  /** The cache's clock. */
  now: () => number;
  /** Whether a production of `key` that began at `startedAt` may still be joined. */
  joinable: (key: string, startedAt: number) => boolean;
}

export interface ProductionsStats {
  coalescedWaits: number;
  refreshes: number;
  refreshFailures: number;
}

export class Productions {
  readonly #inFlight = new Map<string, Flight<unknown>>();
  readonly #now: () => number;
  readonly #joinable: (key: string, startedAt: number) => boolean;
  readonly #counts: ProductionsStats = { coalescedWaits: 0, refreshes: 0, refreshFailures: 0 };

  constructor({ now, joinable }: ProductionsOptions) {
    this.#now = now;
    this.#joinable = joinable;
  }

  get stats(): ProductionsStats {
    return { ...this.#counts };
  }

  /**
   * Runs `produce` for `key` unless a production of it may be joined, in which case the caller
   * waits for that one and gets its result or its failure (`collapsed` says which happened). Each
   * caller stops waiting when its own `signal` aborts (`result` rejects with its reason); `produce`
   * gets a signal that aborts once every caller's has: a production nobody waits for any more
   * leaves the queue like any other. `flight` names the production for the spans of those who wait.
   */
  join<T>(
    key: string,
    produce: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): { result: Promise<T>; collapsed: boolean; flight: object } {
    const collapsed = this.#running(key) !== undefined;
    const flight = this.#flight(key, produce);
    if (collapsed) {
      this.#counts.coalescedWaits++;
    }
    if (flight.waiters !== Infinity) {
      flight.waiters++;
      signal.addEventListener(
        'abort',
        () => {
          if (--flight.waiters === 0) {
            flight.controller.abort(signal.reason);
          }
        },
        { once: true },
      );
    }
    return {
      result: untilAborted(this.#orAgain(flight, key, produce, signal), signal),
      collapsed,
      flight: flight.controller.signal,
    };
  }

  /**
   * The result of `flight` for an asker that joined it, or, when every earlier asker had left it
   * and it failed for that (a render that left the queue), the result of a production of its own:
   * the last one to leave's reason is not this asker's failure (it was a 500). One that goes on (a
   * render in its slot runs to its end) is still joined: a page is rendered once.
   */
  #orAgain<T>(
    flight: Flight<T>,
    key: string,
    produce: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const { signal: flightSignal } = flight.controller;
    if (!flightSignal.aborted) {
      return flight.result;
    }
    const left = flightSignal.reason as unknown;
    return flight.result.catch((error: unknown) =>
      error === left && !signal.aborted
        ? this.join(key, produce, signal).result
        : Promise.reject(error as Error),
    );
  }

  /**
   * Brings an entry up to date in the background, unless a production of it may be joined: no
   * request waits for it, and nothing aborts it. If it fails, `onFailure` hears why; `failed` says
   * whether a result is a failure all the same (a page the app reported an error for).
   */
  refresh<T>(
    key: string,
    produce: (flight: object) => Promise<T>,
    onFailure: (error: unknown) => void,
    failed: (result: T) => unknown = () => undefined,
  ): void {
    if (this.#running(key) !== undefined) {
      return;
    }
    this.#counts.refreshes++;
    const flight = this.#flight(key, produce);
    flight.waiters = Infinity;
    const fail = (error: unknown) => {
      this.#counts.refreshFailures++;
      onFailure(error);
    };
    // A request that finds nothing stored meanwhile joins the refresh and gets its result, which
    // may be an entry and still a failure.
    flight.result.then((result) => {
      const why = failed(result);
      if (why !== undefined) {
        fail(why);
      }
    }, fail);
  }

  /** Whether a production of `key` runs. */
  producing(key: string): boolean {
    return this.#inFlight.has(key);
  }

  /** When the latest production of `key` began, if one runs. */
  startedAt(key: string): number | undefined {
    return this.#inFlight.get(key)?.startedAt;
  }

  /** The production of `key` a new asker may join: none that began before a revalidation of it. */
  #running(key: string): Flight<unknown> | undefined {
    const running = this.#inFlight.get(key);
    return running === undefined || !this.#joinable(key, running.startedAt) ? undefined : running;
  }

  /** The production of `key` that may be joined, or a new one started with `produce`. */
  #flight<T>(key: string, produce: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const running = this.#running(key) as Flight<T> | undefined;
    if (running !== undefined) {
      return running;
    }
    const controller = new AbortController();
    const startedAt = this.#now();
    const flight: Flight<T> = {
      result: produce(controller.signal),
      controller,
      waiters: 0,
      startedAt,
    };
    this.#inFlight.set(key, flight);
    const done = () => {
      if (this.#inFlight.get(key) === flight) {
        this.#inFlight.delete(key);
      }
    };
    flight.result.then(done, done);
    return flight;
  }
}
