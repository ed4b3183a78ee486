/**
 * Stops asking a dependency that keeps failing: after `threshold` failures in a row it opens for
 * `openMs`, during which `allow()` says no at once; then one call is let through to probe, and
 * its outcome closes the breaker or opens it again.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #openMs: number;
  readonly #now: () => number;
  #failures = 0;
  #openUntil = 0;
  #probing = false;

  constructor(threshold: number, openMs: number, now: () => number = Date.now) {
    this.#threshold = threshold;
    this.#openMs = openMs;
    this.#now = now;
  }

  get open(): boolean {
    return this.#failures >= this.#threshold;
  }

  /** Whether a call may go out now: always while closed; one probe at a time once the wait is over. */
  allow(): boolean {
    if (!this.open) {
      return true;
    }
    if (this.#probing || this.#now() < this.#openUntil) {
      return false;
    }
    this.#probing = true;
    return true;
  }

  success(): void {
    this.#failures = 0;
    this.#probing = false;
  }

  failure(): void {
    this.#failures++;
    this.#probing = false;
    if (this.open) {
      this.#openUntil = this.#now() + this.#openMs;
    }
  }
}
