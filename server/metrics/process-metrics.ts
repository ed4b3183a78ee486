import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, collectDefaultMetrics, register } from 'prom-client';
import { serveMetrics, type MetricsAddress } from './metrics-server.ts';
import { registerStatsMetrics, type OriginStats } from './stats-metrics.ts';
import { createTimings, type Timings } from './timings.ts';

/**
 * A serving process (alone or a cluster worker) records its metrics in prom-client's global
 * registry: its figures (read from `stats` when scraped), the timings, and Node's process metrics.
 * A worker also answers its primary's requests for them over the cluster's IPC (prom-client's own
 * message types, beside the exit handshake of process/cluster.ts).
 */
export function recordMetrics(stats: () => OriginStats): Timings {
  collectDefaultMetrics();
  registerStatsMetrics(stats);
  if (cluster.isWorker) {
    // Constructing it installs the worker's listener; the registry itself is not used here.
    new AggregatorRegistry();
  }
  return createTimings();
}

/** A single process serves its own registry. */
export function serveOwnMetrics(
  address: MetricsAddress,
  log: Logger,
  failed: (reason: string) => void,
): void {
  serveMetrics(
    { contentType: register.contentType, read: () => register.metrics() },
    address,
    log,
    failed,
  );
}

/**
 * The cluster primary serves the sum over its workers (prom-client's AggregatorRegistry: counters
 * and histograms add up, gauges by their `aggregator`). A scrape while a worker starts or exits
 * waits for it up to prom-client's 5 s and then answers 503: the next scrape is whole again.
 */
export function serveClusterMetrics(
  address: MetricsAddress,
  log: Logger,
  listening: () => void,
  failed: (reason: string) => void,
): void {
  const aggregator = new AggregatorRegistry();
  serveMetrics(
    { contentType: aggregator.contentType, read: () => aggregator.clusterMetrics() },
    address,
    log,
    failed,
    listening,
  );
}
