import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge } from 'prom-client';

/**
 * A serving process's memory and event-loop delay, labelled with its slot (1 to WORKERS; 1 alone):
 * the figures a recycle limit is set against, one series per worker, bounded however many workers
 * recycles replace. Summed over a cluster they would say little (nor would prom-client's own
 * `nodejs_eventloop_lag_*`, averaged). While a worker is replaced, it and its replacement share the
 * slot: memory is their sum (what the slot holds), delay the larger.
 */
export function registerWorkerGauges(slot: number): void {
  const labels = { slot: String(slot) };
  new Gauge({
    name: 'origin_worker_resident_memory_bytes',
    help: 'Resident memory (RSS) of the worker in this slot: what MAX_RSS_MB is compared with.',
    labelNames: ['slot'],
    aggregator: 'sum',
    collect() {
      this.set(labels, process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'origin_worker_heap_used_bytes',
    help: 'JavaScript heap in use in the worker in this slot.',
    labelNames: ['slot'],
    aggregator: 'sum',
    collect() {
      this.set(labels, process.memoryUsage().heapUsed);
    },
  });
  const delay = monitorEventLoopDelay();
  delay.enable();
  // Both gauges of one scrape read the same window, then it starts again: since the last scrape.
  let window: { p99: number; max: number } | undefined;
  const current = () => {
    if (window === undefined) {
      window = { p99: delay.percentile(99) / 1e9, max: delay.max / 1e9 };
      delay.reset();
      setImmediate(() => (window = undefined));
    }
    return window;
  };
  for (const [stat, read] of [
    ['p99', () => current().p99],
    ['max', () => current().max],
  ] as const) {
    new Gauge({
      name: `origin_worker_event_loop_delay_${stat}_seconds`,
      help: `Event-loop delay of the worker in this slot since the previous scrape, ${stat === 'p99' ? '99th percentile' : 'longest'}.`,
      labelNames: ['slot'],
      aggregator: 'max',
      collect() {
        this.set(labels, read());
      },
    });
  }
}
