import { Counter, Gauge } from 'prom-client';
import type { SharedState, SharedTierStats } from '../render-cache/shared-tier.ts';
import type { RenderCacheStats } from '../render-cache/store.ts';

/** The part of /healthz's figures the metrics read: one source of truth for both. */
export interface OriginStats {
  renders: { started: number; running: number; queued: number; backgroundQueued: number };
  renderCache?: RenderCacheStats;
  sharedCache?: SharedTierStats;
  revalidations?: { requested: number; received: number; duplicates: number; rejected: number };
}

/** Every state, each exported (0 or 1) so that a query sees a state before it first happens. */
const SHARED_STATES = Object.keys({
  connecting: true,
  ready: true,
  down: true,
  'circuit-open': true,
} satisfies Record<SharedState, true>);

type Read = (stats: OriginStats) => number | undefined;

/**
 * Registers in prom-client's global registry one metric per figure of `stats` (the function
 * /healthz calls), each read when scraped by its `collect()`: nothing is counted twice and nothing
 * runs on the request path. Groups absent at startup (no render cache, no shared tier) are left
 * out instead of exported as zeros that never move. Counters and gauges sum across cluster
 * workers (the primary's AggregatorRegistry).
 */
export function registerStatsMetrics(stats: () => OriginStats): void {
  // One snapshot per scrape: the figures of one answer come from the same moment.
  let snapshot: OriginStats | undefined;
  const current = (): OriginStats => {
    if (snapshot === undefined) {
      snapshot = stats();
      setImmediate(() => (snapshot = undefined));
    }
    return snapshot;
  };
  const counter = (name: string, help: string, read: Read) =>
    new Counter({
      name,
      help,
      collect() {
        // A counter has no set(): start from zero and add the figure, which only ever grows.
        this.reset();
        this.inc(read(current()) ?? 0);
      },
    });
  /** `<prefix>_<name>_total` for each (key, name, help) of a table, read from one part of the stats. */
  const counters = <T>(
    prefix: string,
    table: [keyof T, string, string][],
    part: (s: OriginStats) => T | undefined,
  ) => {
    for (const [key, name, help] of table) {
      counter(`${prefix}_${name}_total`, help, (s) => {
        const value = part(s)?.[key];
        return typeof value === 'number' ? value : undefined;
      });
    }
  };
  const gauge = (name: string, help: string, read: Read) =>
    new Gauge({
      name,
      help,
      aggregator: 'sum',
      collect() {
        this.set(read(current()) ?? 0);
      },
    });

  counter(
    'origin_renders_started_total',
    'Renders that got a slot and began (page requests and cache refreshes).',
    (s) => s.renders.started,
  );
  gauge('origin_renders_running', 'Renders holding a slot now.', (s) => s.renders.running);
  gauge(
    'origin_renders_queued',
    'Requests waiting for a render slot now.',
    (s) => s.renders.queued,
  );
  gauge(
    'origin_renders_background_queued',
    'Cache refreshes waiting for a render slot now.',
    (s) => s.renders.backgroundQueued,
  );

  const first = stats();
  if (first.renderCache) {
    const l1 = (s: OriginStats) => s.renderCache;
    gauge('origin_render_cache_entries', 'Pages in the render cache (L1).', (s) => l1(s)?.entries);
    gauge('origin_render_cache_bytes', 'Bytes the render cache (L1) holds.', (s) => l1(s)?.bytes);
    gauge(
      'origin_render_cache_max_bytes',
      'Bytes the render cache (L1) may hold (RENDER_CACHE_BYTES).',
      (s) => l1(s)?.maxBytes,
    );
    const l1Counters: [keyof RenderCacheStats, string, string][] = [
      ['hits', 'hits', 'Fresh pages answered from the render cache (L1).'],
      ['misses', 'misses', 'Lookups in the render cache (L1) that found no usable page.'],
      ['staleServed', 'stale_served', 'Stale pages sent within stale-while-revalidate.'],
      [
        'staleOnError',
        'stale_on_error',
        'Stale pages sent because a render failed (stale-if-error).',
      ],
      ['coalescedWaits', 'coalesced_waits', 'Requests that waited for a render already running.'],
      ['refreshes', 'refreshes', 'Background refreshes of stale pages started.'],
      ['refreshFailures', 'refresh_failures', 'Background refreshes that failed.'],
      [
        'deferred',
        'deferred',
        'New pages not stored: the cache was full and they were asked for the first time.',
      ],
    ];
    counters('origin_render_cache', l1Counters, l1);
  }

  if (first.sharedCache) {
    new Gauge({
      name: 'origin_shared_cache_state',
      help: 'The shared tier state: 1 on the current one (summed over cluster workers: processes in that state).',
      labelNames: ['state'],
      aggregator: 'sum',
      collect() {
        const state = current().sharedCache?.state;
        for (const known of SHARED_STATES) {
          this.set({ state: known }, known === state ? 1 : 0);
        }
      },
    });
    const sharedCounters: [keyof SharedTierStats, string, string][] = [
      ['hits', 'hits', 'L1 misses answered fresh from the shared tier.'],
      ['stale', 'stale', 'L1 misses answered stale from the shared tier (refreshed meanwhile).'],
      ['misses', 'misses', 'Shared-tier lookups that found nothing usable.'],
      ['stores', 'stores', 'Renders written to the shared tier.'],
      [
        'tooLarge',
        'too_large',
        'Pages over SHARED_CACHE_MAX_ENTRY_BYTES, kept by their process only.',
      ],
      ['lockWaits', 'lock_waits', "Waits for another process's render of the same page."],
      ['unreadable', 'unreadable', 'Entries in Redis this process could not read.'],
    ];
    counters('origin_shared_cache', sharedCounters, (s) => s.sharedCache);
    new Counter({
      name: 'origin_shared_cache_skipped_total',
      help: 'Requests that went on without the shared tier, by reason.',
      labelNames: ['reason'],
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(current().sharedCache?.skipped ?? {})) {
          this.inc({ reason }, count);
        }
      },
    });
  }

  if (first.revalidations) {
    const revalidationCounters: [keyof NonNullable<OriginStats['revalidations']>, string][] = [
      ['requested', 'Revalidations started here (endpoint, npm run revalidate, the app).'],
      ['received', 'Revalidations from other processes applied here (IPC or pub/sub).'],
      ['duplicates', 'Revalidations heard again on a second channel, applied once.'],
      ['rejected', 'Revalidation messages from other processes that were malformed.'],
    ];
    for (const [key, help] of revalidationCounters) {
      counter(`origin_revalidations_${key}_total`, help, (s) => s.revalidations?.[key]);
    }
  }
}
