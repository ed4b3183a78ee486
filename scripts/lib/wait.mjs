// The one polling loop of the tests and the tools: ask until the answer is there, bounded in time,
// and say what was awaited (and what was seen last) when it never came. The tests import it through
// test/helpers/wait.mjs (tools never import test code).
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves with the first truthy value `check` returns (it may be async), polling every `everyMs`;
 * rejects after `timeoutMs` with `what` and, when `seen` is given, what it says of the last state.
 * @template T
 * @param {() => T | Promise<T>} check
 * @param {{ what: string, timeoutMs?: number, everyMs?: number, seen?: () => string }} options
 * @returns {Promise<NonNullable<Awaited<T>>>}
 */
export async function waitFor(check, { what, timeoutMs = 15_000, everyMs = 20, seen }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`no ${what} within ${timeoutMs} ms${seen ? `:\n${seen()}` : ''}`);
    }
    await sleep(everyMs);
  }
}
