import type { Logger } from 'pino';
import { collectDefaultMetrics, register } from 'prom-client';
import type { PrimaryStats } from '../process/cluster.ts';
import { workerSlot } from '../process/worker.ts';
import { answerPrimary, ClusterMetrics } from './cluster-metrics.ts';
import { serveMetrics, type MetricsAddress } from './metrics-server.ts';
import { registerStatsMetrics, type OriginStats } from './stats-metrics.ts';
import { recordTimings } from './timings.ts';
import { registerWorkerGauges } from './worker-gauges.ts';

/**
 * A serving process (alone or a cluster worker) records its metrics in prom-client's global
 * registry: its figures (read from `stats` when scraped), the timings, its memory and event-loop
 * delay, and Node's process metrics. A worker of the origin's primary also answers the primary's
 * asks for them over the cluster's IPC (cluster-metrics.ts).
 */
export function recordMetrics(stats: () => OriginStats): void {
  collectDefaultMetrics();
  registerStatsMetrics(stats);
  const slot = workerSlot();
  registerWorkerGauges(slot ?? 1);
  if (slot !== undefined) {
    answerPrimary();
  }
  recordTimings();
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
 * The cluster primary serves the sum over its workers, with its own figures (cluster-metrics.ts).
 * A worker that does not answer within 2 s (busy, or exiting) counts with its last answer.
 */
export function serveClusterMetrics(
  address: MetricsAddress,
  stats: () => PrimaryStats,
  log: Logger,
  listening: () => void,
  failed: (reason: string) => void,
): void {
  const metrics = new ClusterMetrics(stats);
  serveMetrics(
    { contentType: metrics.contentType, read: () => metrics.read() },
    address,
    log,
    failed,
    listening,
  );
}
