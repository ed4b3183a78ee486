// The one owner of what renders fetch. Angular's HttpClient goes through the global fetch on the
// server, on both engines, in code the origin does not build; so the process's fetch is wrapped
// once, and a fetch made inside a render (an AsyncLocalStorage scope the Renderer enters around
// each render) goes through the data cache, which also tells the page what its data allows
// (groups, freshness, privacy). Any other fetch of the process (the CDN purge, the app's own
// server code) goes out as it always did.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataCache, DataUse } from './data-cache.ts';

/** The process's own fetch, before the origin wrapped it: what the data cache asks APIs with. */
export const processFetch: typeof fetch = globalThis.fetch.bind(globalThis);

/** The render a piece of code runs for, and the cache its fetches go through. */
const scope = new AsyncLocalStorage<{ use: DataUse; cache: DataCache }>();

let wrapped = false;

/** What a render's fetches leave, before it fetched anything. */
export function newDataUse(bypass: boolean): DataUse {
  return {
    groups: new Set(),
    keys: new Set(),
    freshMs: undefined,
    private: false,
    failed: false,
    fetches: [],
    waitedMs: 0,
    inFlight: 0,
    busySince: 0,
    bypass,
  };
}

/**
 * Runs a render with its fetches going through `cache` and accounted to `use`. The first call
 * wraps the process's fetch (once: outside a render it is the same fetch).
 */
export function withRenderFetches<T>(
  cache: DataCache,
  use: DataUse,
  render: () => Promise<T>,
): Promise<T> {
  if (!wrapped) {
    wrapped = true;
    globalThis.fetch = (input, init) => {
      const entered = scope.getStore();
      return entered === undefined
        ? processFetch(input, init)
        : entered.cache.fetch(new Request(input, init), entered.use);
    };
  }
  return scope.run({ use, cache }, render);
}
