import { Counter, Gauge } from 'prom-client';
import type { LinkState } from '../redis/link.ts';
import type { SharedTierStats } from '../cache/shared-tier.ts';
import type { StoreStats } from '../cache/store.ts';

/** The part of /healthz's figures the metrics read: one source of truth for both. */
export interface OriginStats {
  renders: {
    started: number;
    running: number;
    queued: number;
    backgroundQueued: number;
    /**
     * Reads of a request input a shared page's route does not declare, by `route input`
     * (`products/:id cookie sid`: names the app's code asked for, bounded; pages/undeclared-reads.ts).
     */
    undeclaredReads?: Record<string, number>;
  };
  renderCache?: StoreStats;
  sharedCache?: SharedTierStats;
  /** Failures by name (errors.ts): answered, logged, or both. */
  errors?: Record<string, number>;
  /** What renders fetched (data-cache/): the store's figures when it keeps any, every fetch by host. */
  dataCache?: Partial<StoreStats> & { byHost: Record<string, Record<string, number>> };
  revalidations?: { requested: number; received: number; duplicates: number; rejected: number };
}

/** Every state, each exported (0 or 1) so that a query sees a state before it first happens. */
const SHARED_STATES = Object.keys({
  connecting: true,
  ready: true,
  down: true,
  'circuit-open': true,
} satisfies Record<LinkState, true>);

type Read = (stats: OriginStats) => number | undefined;

/** One metric: its kind, name, help text and where its figure is read. */
type Metric = ['counter' | 'gauge', string, string, Read];

/** What every process exports. */
const RENDERS: Metric[] = [
  [
    'counter',
    'origin_renders_started_total',
    'Renders that got a slot and began (page requests and cache refreshes).',
    (s) => s.renders.started,
  ],
  ['gauge', 'origin_renders_running', 'Renders holding a slot now.', (s) => s.renders.running],
  [
    'gauge',
    'origin_renders_queued',
    'Requests waiting for a render slot now.',
    (s) => s.renders.queued,
  ],
  [
    'gauge',
    'origin_renders_background_queued',
    'Cache refreshes waiting for a render slot now.',
    (s) => s.renders.backgroundQueued,
  ],
];

const l1 =
  (read: (stats: StoreStats) => number): Read =>
  (s) =>
    s.renderCache && read(s.renderCache);

/** With a render cache (RENDER_CACHE_BYTES > 0). */
const RENDER_CACHE: Metric[] = [
  ['gauge', 'origin_render_cache_entries', 'Pages in the render cache (L1).', l1((c) => c.entries)],
  ['gauge', 'origin_render_cache_bytes', 'Bytes the render cache (L1) holds.', l1((c) => c.bytes)],
  [
    'gauge',
    'origin_render_cache_max_bytes',
    'Bytes the render cache (L1) may hold (RENDER_CACHE_BYTES).',
    l1((c) => c.maxBytes),
  ],
  [
    'counter',
    'origin_render_cache_hits_total',
    'Fresh pages answered from the render cache (L1).',
    l1((c) => c.hits),
  ],
  [
    'counter',
    'origin_render_cache_misses_total',
    'Lookups in the render cache (L1) that found no usable page.',
    l1((c) => c.misses),
  ],
  [
    'counter',
    'origin_render_cache_stale_served_total',
    'Stale pages sent within stale-while-revalidate.',
    l1((c) => c.staleServed),
  ],
  [
    'counter',
    'origin_render_cache_stale_on_error_total',
    'Stale pages sent because a render failed (stale-if-error).',
    l1((c) => c.staleOnError),
  ],
  [
    'counter',
    'origin_render_cache_coalesced_waits_total',
    'Requests that waited for a render already running.',
    l1((c) => c.coalescedWaits),
  ],
  [
    'counter',
    'origin_render_cache_refreshes_total',
    'Background refreshes of stale pages started.',
    l1((c) => c.refreshes),
  ],
  [
    'counter',
    'origin_render_cache_refresh_failures_total',
    'Background refreshes that failed.',
    l1((c) => c.refreshFailures),
  ],
  [
    'counter',
    'origin_render_cache_deferred_total',
    'New pages not stored: the cache was full and they were asked for the first time.',
    l1((c) => c.deferred),
  ],
];

const l2 =
  (read: (stats: SharedTierStats) => number): Read =>
  (s) =>
    s.sharedCache && read(s.sharedCache);

/** With a shared tier (REDIS_URL); its state and skips are labelled metrics of their own. */
const SHARED_CACHE: Metric[] = [
  [
    'counter',
    'origin_shared_cache_hits_total',
    'L1 misses answered fresh from the shared tier.',
    l2((c) => c.hits),
  ],
  [
    'counter',
    'origin_shared_cache_stale_total',
    'L1 misses answered stale from the shared tier (refreshed meanwhile).',
    l2((c) => c.stale),
  ],
  [
    'counter',
    'origin_shared_cache_misses_total',
    'Shared-tier lookups that found nothing usable.',
    l2((c) => c.misses),
  ],
  [
    'counter',
    'origin_shared_cache_stores_total',
    'Renders written to the shared tier.',
    l2((c) => c.stores),
  ],
  [
    'counter',
    'origin_shared_cache_too_large_total',
    'Pages over SHARED_CACHE_MAX_ENTRY_BYTES, kept by their process only.',
    l2((c) => c.tooLarge),
  ],
  [
    'counter',
    'origin_shared_cache_lock_waits_total',
    "Waits for another process's render of the same page.",
    l2((c) => c.lockWaits),
  ],
  [
    'counter',
    'origin_shared_cache_unreadable_total',
    'Entries in Redis this process could not read.',
    l2((c) => c.unreadable),
  ],
];

type RevalidationStats = NonNullable<OriginStats['revalidations']>;
const revalidations =
  (read: (stats: RevalidationStats) => number): Read =>
  (s) =>
    s.revalidations && read(s.revalidations);

const REVALIDATIONS: Metric[] = [
  [
    'counter',
    'origin_revalidations_requested_total',
    'Revalidations started here (endpoint, npm run revalidate, the app).',
    revalidations((r) => r.requested),
  ],
  [
    'counter',
    'origin_revalidations_received_total',
    'Revalidations from other processes applied here (IPC or pub/sub).',
    revalidations((r) => r.received),
  ],
  [
    'counter',
    'origin_revalidations_duplicates_total',
    'Revalidations heard again on a second channel, applied once.',
    revalidations((r) => r.duplicates),
  ],
  [
    'counter',
    'origin_revalidations_rejected_total',
    'Revalidation messages from other processes that were malformed.',
    revalidations((r) => r.rejected),
  ],
];

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
  const first = stats();
  for (const [kind, name, help, read] of [
    ...RENDERS,
    ...(first.renderCache ? RENDER_CACHE : []),
    ...(first.sharedCache ? SHARED_CACHE : []),
    ...(first.revalidations ? REVALIDATIONS : []),
  ]) {
    if (kind === 'counter') {
      new Counter({
        name,
        help,
        collect() {
          // A counter has no set(): start from zero and add the figure, which only ever grows.
          this.reset();
          this.inc(read(current()) ?? 0);
        },
      });
    } else {
      new Gauge({
        name,
        help,
        aggregator: 'sum',
        collect() {
          this.set(read(current()) ?? 0);
        },
      });
    }
  }
  if (first.sharedCache) {
    registerSharedLabels(current);
  }
  registerRenderLabels(current);
}

/** What renders did, by route and input (undeclared reads) and by API host (the data cache); failures by name. */
function registerRenderLabels(current: () => OriginStats): void {
  new Counter({
    name: 'origin_errors_total',
    help: 'Failures the origin answered or logged, by name (docs/errors.md).',
    labelNames: ['code'],
    collect() {
      this.reset();
      for (const [code, count] of Object.entries(current().errors ?? {})) {
        this.inc({ code }, count);
      }
    },
  });
  new Counter({
    name: 'origin_data_fetches_total',
    help: "Renders' fetches by host and how the data cache answered them (hit, stale, shared, miss, revalidated, coalesced, bypass, error).",
    labelNames: ['host', 'outcome'],
    collect() {
      this.reset();
      for (const [host, outcomes] of Object.entries(current().dataCache?.byHost ?? {})) {
        for (const [outcome, count] of Object.entries(outcomes)) {
          this.inc({ host, outcome }, count);
        }
      }
    },
  });
  for (const [name, help, read] of [
    [
      'origin_data_cache_entries',
      'Responses in the data cache (this process).',
      (c: Partial<StoreStats>) => c.entries,
    ],
    [
      'origin_data_cache_bytes',
      'Bytes the data cache holds (this process).',
      (c: Partial<StoreStats>) => c.bytes,
    ],
  ] as const) {
    new Gauge({
      name,
      help,
      aggregator: 'sum',
      collect() {
        const data = current().dataCache;
        this.set((data && read(data)) ?? 0);
      },
    });
  }
  new Counter({
    name: 'origin_render_undeclared_reads_total',
    help: "Reads, in shared pages' renders, of a request input their route does not declare (they see nothing there).",
    labelNames: ['route', 'input'],
    collect() {
      this.reset();
      for (const [series, count] of Object.entries(current().renders.undeclaredReads ?? {})) {
        const space = series.indexOf(' ');
        this.inc({ route: series.slice(0, space), input: series.slice(space + 1) }, count);
      }
    },
  });
}

/** The shared tier's state (one series per state) and its skips (one per reason). */
function registerSharedLabels(current: () => OriginStats): void {
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
