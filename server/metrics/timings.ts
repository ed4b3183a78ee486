// The histograms and counts of what happens per request, in prom-client's global registry, as
// subscribers of the origin's channels (channels.ts): responses by entrance and status class,
// renders, renders' requests to their APIs by host, and visitors' personal parts (their renders,
// and how each part was served, by part).
import type { ServerResponse } from 'node:http';
import { Counter, Histogram } from 'prom-client';
import {
  channels,
  follow,
  type Entrance,
  type PartRenderMessage,
  type PartServedMessage,
  type RenderMessage,
  type RequestMessage,
  type RouteMessage,
  type UpstreamEndedMessage,
} from '../channels.ts';

/** Renders take milliseconds to RENDER_TIMEOUT_MS (5 s by default) and beyond. */
const RENDER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From a fast-path answer (~0.1 ms) to a slow render. */
const RESPONSE_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const ENTRANCES: Entrance[] = ['fast-path', 'koa'];

/** Registers the histograms and subscribes them, for good: what a serving process records. */
export function recordTimings(): void {
  createTimings().subscribe();
}

/**
 * The histograms, registered (once per process: prom-client's registry takes a name once), and
 * what subscribes them to the channels (returning what unsubscribes them). Labels are bounded (2
 * answers × 5 status classes, hosts by the data cache), never the URL: a label value per path
 * would grow without end under a crawl.
 */
export function createTimings(): { subscribe: () => () => void } {
  return subscriberOf(histograms());
}

/** The histograms, in prom-client's global registry. */
function histograms() {
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
  const partRenders = new Histogram({
    name: 'origin_part_render_duration_seconds',
    help: "Renders of a visitor's personal parts of a page, from the start in their slot to their end.",
    buckets: RENDER_BUCKETS,
  });
  const parts = new Counter({
    name: 'origin_parts_total',
    help: "Visitors' personal parts served, by part and outcome (hit, rendered, placeholder, failed, timeout, shed).",
    labelNames: ['part', 'outcome'],
  });
  return { renders, bound, upstream, partRenders, parts };
}

/** What records a response, a render and an upstream call in the histograms, from the channels. */
function subscriberOf(metrics: ReturnType<typeof histograms>): {
  subscribe: () => () => void;
} {
  const { renders, bound, upstream } = metrics;
  /** When each request came, and whether the fast path answered it. */
  const started = new WeakMap<ServerResponse, { startMs: number; entrance: Entrance }>();
  const request = {
    start: ({ res }: RequestMessage) => {
      follow(res);
      started.set(res, { startMs: performance.now(), entrance: 'koa' });
    },
    asyncEnd: ({ res }: RequestMessage) => {
      const it = started.get(res);
      // A response that never finished (its client left) is not a response time.
      if (it !== undefined && res.writableFinished) {
        const index = Math.min(Math.max(Math.trunc(res.statusCode / 100), 1), 5) - 1;
        bound.get(it.entrance)![index].observe((performance.now() - it.startMs) / 1000);
      }
    },
  };
  const route = (message: unknown) => {
    const { res, entrance } = message as RouteMessage;
    const it = started.get(res);
    if (it !== undefined && entrance !== undefined) {
      it.entrance = entrance;
    }
  };
  const render = {
    asyncEnd: ({ ms }: RenderMessage) => {
      if (ms !== undefined) {
        renders.observe(ms / 1000);
      }
    },
  };
  const fetched = (message: unknown) => {
    const { host, seconds } = message as UpstreamEndedMessage;
    upstream.observe({ host }, seconds);
  };

  return {
    subscribe: () => {
      channels.request.subscribe(request as never);
      channels.route.subscribe(route);
      channels.render.subscribe(render as never);
      channels.upstreamEnded.subscribe(fetched);
      const unsubscribeParts = partsSubscriber(metrics);
      return () => {
        unsubscribeParts();
        channels.request.unsubscribe(request as never);
        channels.route.unsubscribe(route);
        channels.render.unsubscribe(render as never);
        channels.upstreamEnded.unsubscribe(fetched);
      };
    },
  };
}

/** What records visitors' parts: their renders' times, and how each part was served. */
function partsSubscriber({ partRenders, parts }: ReturnType<typeof histograms>): () => void {
  const partRender = {
    asyncEnd: ({ ms }: PartRenderMessage) => {
      if (ms !== undefined) {
        partRenders.observe(ms / 1000);
      }
    },
  };
  // Part names are the app's declared ones: a bounded set.
  const partServed = (message: unknown) => {
    const { part, outcome } = message as PartServedMessage;
    parts.inc({ part, outcome });
  };
  channels.partRender.subscribe(partRender as never);
  channels.partServed.subscribe(partServed);
  return () => {
    channels.partRender.unsubscribe(partRender as never);
    channels.partServed.unsubscribe(partServed);
  };
}
