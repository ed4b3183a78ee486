import { Histogram } from 'prom-client';
import type { Entrance, RequestObserver } from '../observe/exchange.ts';

export interface Timings {
  /** A render ended (in its slot, however it ended), after this many seconds. */
  renderEnded: (seconds: number) => void;
  /** A render's request to an API (data-cache/) ended after this many seconds; `host` is bounded there. */
  upstreamEnded: (host: string, seconds: number) => void;
  /** Times each response, by entrance and status class. */
  responses: RequestObserver;
}

/** Renders take milliseconds to RENDER_TIMEOUT_MS (5 s by default) and beyond. */
const RENDER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From a fast-path answer (~0.1 ms) to a slow render. */
const RESPONSE_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const ENTRANCES: Entrance[] = ['fast-path', 'koa'];

/**
 * The two histograms, in prom-client's global registry. Labels are bounded (2 answers × 5 status
 * classes), never the URL: a label value per path would grow without end under a crawl.
 */
export function createTimings(): Timings {
  const renders = new Histogram({
    name: 'origin_render_duration_seconds',
    help: 'Renders, from the start in their slot to their end (success, failure or timeout).',
    buckets: RENDER_BUCKETS,
  });
  const responses = new Histogram({
    name: 'origin_response_duration_seconds',
    help: 'Responses, from the request to the last byte handed to the socket (finish).',
    labelNames: ['answer', 'status'],
    buckets: RESPONSE_BUCKETS,
  });
  // Every label pair bound once, so a response costs an array index, not a label lookup.
  const bound = new Map(
    ENTRANCES.map((answer) => {
      const byClass = STATUS_CLASSES.map((status) => {
        if (status !== '1xx') {
          // Series exported from the start, so that rate() sees their first increase.
          responses.zero({ answer, status });
        }
        return responses.labels({ answer, status });
      });
      return [answer, byClass] as const;
    }),
  );
  const upstream = new Histogram({
    name: 'origin_data_upstream_duration_seconds',
    help: "Renders' requests to their APIs that the data cache could not answer, by host.",
    labelNames: ['host'],
    buckets: RENDER_BUCKETS,
  });
  return {
    renderEnded: (seconds) => renders.observe(seconds),
    upstreamEnded: (host, seconds) => upstream.observe({ host }, seconds),
    responses: {
      ended: (exchange, _req, res, finished) => {
        // A response that never finished (its client left) is not a response time.
        if (finished) {
          const byClass = bound.get(exchange.entrance)!;
          const index = Math.min(Math.max(Math.trunc(res.statusCode / 100), 1), 5) - 1;
          byClass[index].observe((performance.now() - exchange.startMs) / 1000);
        }
      },
    },
  };
}
