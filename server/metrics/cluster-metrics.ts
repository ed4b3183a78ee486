// A cluster's metrics in one scrape: the primary asks each worker for its registry over the IPC
// channel and sums them (prom-client's AggregatorRegistry.aggregate, each metric by its
// aggregator), adding its own figures (recycles, restarts). Workers come and go (recycles,
// crashes), and a worker that leaves takes its counts with it: summed, a counter would fall, which
// rate() reads as a reset and turns into a spike as large as what every other worker counted. So
// the primary keeps what each departed worker counted (its last words, or its last answer when it
// died without them) and adds it to every later sum: the cluster's counters and histograms only
// grow, across recycles, until the pod itself restarts.
import cluster, { type Worker } from 'node:cluster';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  type PrometheusContentType,
  register,
  Registry,
} from 'prom-client';
import type { PrimaryStats } from '../process/cluster.ts';
import { sayBeforeExiting } from '../process/worker.ts';
import { RECYCLE_REASONS } from '../process/recycling.ts';

/** A metric as `getMetricsAsJSON()` gives it and `AggregatorRegistry.aggregate()` takes it. */
interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}

/** Primary → worker: your registry, please. Worker → primary: here, or as it exits (`last`). */
const ASK = 'origin:metrics?';
const ANSWER = 'origin:metrics';

interface Ask {
  type: typeof ASK;
  id: number;
}

interface Answer {
  type: typeof ANSWER;
  /** The Ask's id; undefined for the worker's last words. */
  id: number | undefined;
  metrics: MetricJson[];
}

function isAsk(value: unknown): value is Ask {
  return typeof value === 'object' && value !== null && (value as Ask).type === ASK;
}

function isAnswer(value: unknown): value is Answer {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Answer).type === ANSWER &&
    Array.isArray((value as Answer).metrics)
  );
}

/** A worker's part: answers its primary's asks, and sends its final figures as it exits. */
export function answerPrimary(): void {
  const answer = async (id: number | undefined): Promise<Answer> => ({
    type: ANSWER,
    id,
    metrics: (await register.getMetricsAsJSON()) as unknown as MetricJson[],
  });
  process.on('message', (message) => {
    if (isAsk(message)) {
      void answer(message.id).then((reply) => process.send?.(reply));
    }
  });
  sayBeforeExiting(() => answer(undefined));
}

/** How long a scrape waits for a worker; one that has not answered counts with its last answer. */
const ANSWER_WITHIN_MS = 2000;

/** The primary's part: every worker's figures summed, with its own. */
export class ClusterMetrics {
  readonly contentType = register.contentType;
  /** What departed workers counted: counters and histograms only (a gauge is a present value). */
  #departed: MetricJson[] = [];
  /** Each listening worker's latest answer, until it departs. */
  readonly #latest = new Map<Worker, MetricJson[] | undefined>();
  readonly #own: Registry;
  #nextId = 0;
  /** The scrapes under way: who answered each, and how each learns that it may be done. */
  readonly #scrapes = new Map<number, { answered: Set<Worker>; check: () => void }>();

  constructor(stats: () => PrimaryStats) {
    this.#own = primaryRegistry(stats);
    // A worker that does not listen yet has served nothing: it is asked once it does.
    cluster.on('listening', (worker) => this.#latest.set(worker, undefined));
    cluster.on('message', (worker, message) => {
      if (!isAnswer(message) || !this.#latest.has(worker)) {
        return;
      }
      if (message.id === undefined) {
        // Its last words: what it counted in all, sent after its server closed.
        this.#depart(worker, message.metrics);
        return;
      }
      this.#latest.set(worker, message.metrics);
      const scrape = this.#scrapes.get(message.id);
      scrape?.answered.add(worker);
      scrape?.check();
    });
    // Without last words (a crash, SIGKILL): what it said last, which the sums already held.
    cluster.on('exit', (worker) => {
      if (this.#latest.has(worker)) {
        this.#depart(worker, this.#latest.get(worker) ?? []);
      }
    });
  }

  /** The exposition text: every worker's answer (or last answer), the departed, the primary's own. */
  async read(): Promise<string> {
    const asked = [...this.#latest.keys()].filter((worker) => worker.isConnected());
    const id = this.#nextId++;
    const answered = new Set<Worker>();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ANSWER_WITHIN_MS);
      const check = () => {
        // A worker that departed meanwhile is waited for no longer.
        if (asked.every((worker) => answered.has(worker) || !this.#latest.has(worker))) {
          clearTimeout(timer);
          resolve();
        }
      };
      this.#scrapes.set(id, { answered, check });
      const ask: Ask = { type: ASK, id };
      for (const worker of asked) {
        worker.send(ask, undefined, {}, () => undefined);
      }
      check();
    });
    this.#scrapes.delete(id);
    // Read after the wait: a worker that departed meanwhile is in #departed now, not here.
    const workers = [...this.#latest.entries()].map(([worker, metrics]) =>
      answered.has(worker) ? (metrics ?? []) : countsOf(metrics ?? []),
    );
    const summed = AggregatorRegistry.aggregate<PrometheusContentType>([
      ...workers,
      this.#departed,
    ]);
    return Registry.merge([summed, this.#own]).metrics();
  }

  #depart(worker: Worker, metrics: MetricJson[]): void {
    this.#latest.delete(worker);
    this.#departed = addCounts(this.#departed, countsOf(metrics));
    for (const scrape of this.#scrapes.values()) {
      scrape.check();
    }
  }
}

/** The counters and histograms of a registry's JSON: what only grows. */
function countsOf(metrics: MetricJson[]): MetricJson[] {
  return metrics.filter((metric) => metric.type === 'counter' || metric.type === 'histogram');
}

/** `base` with `added` summed into it, series by series (a histogram's buckets, sum and count too). */
function addCounts(base: MetricJson[], added: MetricJson[]): MetricJson[] {
  const byName = new Map(base.map((metric) => [metric.name, metric]));
  for (const metric of added) {
    const sum = new Map(
      (byName.get(metric.name)?.values ?? []).map((value) => [seriesKey(value), { ...value }]),
    );
    for (const value of metric.values) {
      const key = seriesKey(value);
      const into = sum.get(key);
      if (into) {
        into.value += value.value;
      } else {
        sum.set(key, { ...value });
      }
    }
    byName.set(metric.name, { ...metric, values: [...sum.values()] });
  }
  return [...byName.values()];
}

function seriesKey({ metricName, labels }: MetricJson['values'][number]): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((name) => [name, labels[name]]);
  return JSON.stringify([metricName, sorted]);
}

/** The primary's own figures: what it did to its workers, and its own size. */
function primaryRegistry(stats: () => PrimaryStats): Registry {
  const registry = new Registry();
  new Counter({
    name: 'origin_worker_recycles_total',
    help: 'Workers replaced because they reached MAX_REQUESTS or MAX_RSS_MB, by reason (counted by the primary, once).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      const { recycles } = stats();
      for (const reason of RECYCLE_REASONS) {
        this.inc({ reason }, recycles[reason]);
      }
    },
  });
  new Counter({
    name: 'origin_worker_restarts_total',
    help: 'Workers replaced because they exited unexpectedly (crashes, kills).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().restarts);
    },
  });
  new Gauge({
    name: 'origin_primary_resident_memory_bytes',
    help: "The cluster primary's resident memory: part of a pod's memory besides its workers'.",
    registers: [registry],
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  return registry;
}
