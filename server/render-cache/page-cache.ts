// The render cache: the pages of routes that declare a shared-cache policy, kept by the cache core
// (cache/) in this process and, with REDIS_URL, in the shared tier every replica reads. What is
// page-specific is here: a page's size and path, its entry in Redis, its codings made once when it
// is kept, and which pages the fast path may answer (a fresh 200).
import { channels, type RenderTiming, traced } from '../channels.ts';
import type { Logger } from 'pino';
import { SharedTier } from '../cache/shared-tier.ts';
import { EntryStore, type StoreSettings } from '../cache/store.ts';
import { type Produce, type Served, TieredCache } from '../cache/tiered-cache.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { encodedForStore } from '../http/encodings.ts';
import type { RedisLink } from '../redis/link.ts';
import { type CachedPage, pageBytes, pathOf } from './page-entry.ts';
import { pageCodec } from './shared-entry.ts';

export type PageStore = EntryStore<CachedPage>;
export type PageTier = SharedTier<CachedPage>;
/** A page served, and the render that made it when one ran for this request (Server-Timing). */
export type ServedPage = Served<CachedPage, RenderTiming>;

/** This process's pages (RENDER_CACHE_BYTES, RENDER_CACHE_ADMISSION). */
export function createPageStore(settings: StoreSettings): PageStore {
  return new EntryStore<CachedPage>({ ...settings, sizeOf: pageBytes, pathOf });
}

/**
 * The pages every process shares, under `<prefix>:{<build>-<csp>}`: builds never read each other's
 * pages, and a nonced page is stored as a template only a process with a policy can read.
 */
export function createPageTier(options: {
  link: RedisLink;
  keyPrefix: string;
  maxEntryBytes: number;
  buildId: string;
  csp: ContentSecurityPolicy | undefined;
  log: Logger;
}): PageTier {
  const { keyPrefix, buildId, csp } = options;
  return new SharedTier<CachedPage>({
    ...options,
    namespace: `${keyPrefix}:{${buildId}-${csp ? 'csp' : 'plain'}}`,
    codec: pageCodec(csp),
    pathOf,
  });
}

export interface PageCacheOptions {
  store: PageStore;
  shared: PageTier | undefined;
  produce: Produce<CachedPage, RenderTiming>;
  patienceMs: number;
  log: Logger;
}

/** Pages through the cache core: rendered once per key, in this process and across the tier. */
export class PageCache {
  readonly #cache: TieredCache<CachedPage, RenderTiming>;

  constructor(options: PageCacheOptions) {
    this.#cache = new TieredCache<CachedPage, RenderTiming>({
      ...options,
      // A page kept is compressed once, in every stored coding (http/encodings.ts), and only once
      // kept: a page the cache turns away (admission) goes out compressed on its way
      // (docs/architecture.md#what-each-optimization-saves).
      finish: (page) =>
        traced(
          channels.compress,
          () => ({ bytes: page.answer.body.length }),
          async () => ({ ...page, answer: await encodedForStore(page.answer) }),
        ),
      cache: 'render',
    });
  }

  /** A fresh 200 page for `key`, to answer before anything else runs (the fast path). */
  fresh(key: string): ServedPage | undefined {
    return this.#cache.fresh(key, (page) => page.answer.status === 200);
  }

  /** `maxStaleMs`: the request's bound on a stale page (its `max-stale`); undefined: the cache's rules. */
  serve(
    key: string,
    signal: AbortSignal,
    asker?: unknown,
    maxStaleMs?: number,
  ): Promise<ServedPage> {
    return this.#cache.serve(key, signal, asker, maxStaleMs);
  }
}
