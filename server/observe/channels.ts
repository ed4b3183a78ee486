// The origin's own spans, published on node:diagnostics_channel tracing channels (as Nitro v3 and
// undici publish theirs): each step of a request's story announces its start and end with a message
// that says what it did. Nothing here knows OpenTelemetry: with nobody subscribed a step costs one
// `hasSubscribers` read and no message is made; the tracing module (observe/tracing/) subscribes
// when OTEL_* asks for traces, and any other tracer (an APM agent) may subscribe the same way.
import { channel, type TracingChannel, tracingChannel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Exchange } from './exchange.ts';

/** A request, from its arrival to its response's end (`asyncEnd`), on either entrance and protocol. */
export interface RequestMessage {
  req: IncomingMessage;
  res: ServerResponse;
  exchange: Exchange;
}

/** Which cache: the rendered pages' or the data renders fetch. */
export type CacheName = 'render' | 'data';

/** A look in one tier of a cache; `state` set once it is known (`fresh`, `stale`, `miss`, …). */
export interface CacheLookupMessage {
  cache: CacheName;
  tier: 'memory' | 'shared';
  state?: string;
}

/**
 * The production of an entry after a miss (a page's render, an API's answer), which the requests
 * asking for the same key at the same time wait on (`coalesced`). `flight` is the same object for
 * the production and every request that joined it.
 */
export interface CacheFillMessage {
  cache: CacheName;
  flight: object;
}

/** A request joined a production already under way (`CacheFillMessage.flight`). */
export interface CoalescedMessage {
  cache: CacheName;
  flight: object;
}

/** A background refresh of a stale entry (stale-while-revalidate): its own trace. */
export interface CacheRefreshMessage {
  cache: CacheName;
  /** As CacheFillMessage's: requests that find nothing stored meanwhile join it. */
  flight: object;
}

/** The wait for a render slot (MAX_CONCURRENT_RENDERS). */
export interface RenderQueueMessage {
  background: boolean;
}

/** A render in its slot. */
export interface RenderMessage {
  /** The server route's path (`/products/:id`). */
  route: string;
  background: boolean;
  /** Set at the end: Angular's ErrorHandler reported an error. */
  reportedError?: boolean;
  status?: number;
}

/** Critical CSS inlined into a rendered page (CRITICAL_CSS=compiled). */
export interface CriticalCssMessage {
  bytes: number;
}

/** A page compressed once, in every stored coding, as the render cache keeps it. */
export interface CompressMessage {
  bytes: number;
}

/** A revalidation on demand (POST /_origin/revalidate, revalidate(), a message from another process). */
export interface RevalidateMessage {
  mode: string;
  paths: number;
  groups: number;
  affected?: number;
}

/** One call to Redis; `outcome` set at the end: `ok`, or why it went without Redis. */
export interface RedisMessage {
  operation: string;
  outcome?: string;
}

/** A render's fetch (Angular's HttpClient on the server), answered by the data cache or its API. */
export interface DataFetchMessage {
  method: string;
  url: URL;
  /** Set at the end: how the data cache answered it (`hit`, `miss`, …) and the status. */
  outcome?: string;
  status?: number;
}

/**
 * A request about to leave for an API: a subscriber may add its trace context (`traceparent`) to
 * `headers`, which go out with it.
 */
export interface UpstreamMessage {
  url: string;
  headers: Headers;
}

export const channels = {
  request: tracingChannel<unknown, RequestMessage>('origin:request'),
  cacheLookup: tracingChannel<unknown, CacheLookupMessage>('origin:cache.lookup'),
  cacheFill: tracingChannel<unknown, CacheFillMessage>('origin:cache.fill'),
  cacheRefresh: tracingChannel<unknown, CacheRefreshMessage>('origin:cache.refresh'),
  renderQueue: tracingChannel<unknown, RenderQueueMessage>('origin:render.queue'),
  render: tracingChannel<unknown, RenderMessage>('origin:render'),
  criticalCss: tracingChannel<unknown, CriticalCssMessage>('origin:render.critical-css'),
  compress: tracingChannel<unknown, CompressMessage>('origin:cache.compress'),
  revalidate: tracingChannel<unknown, RevalidateMessage>('origin:revalidate'),
  redis: tracingChannel<unknown, RedisMessage>('origin:redis'),
  dataFetch: tracingChannel<unknown, DataFetchMessage>('origin:data.fetch'),
  coalesced: channel('origin:cache.coalesced'),
  upstream: channel('origin:data.upstream'),
};

/**
 * Runs `fn` as the span `message()` describes when someone listens, handing it the message to
 * complete with what it found (an outcome); else just runs it, making no message.
 * (`start.hasSubscribers`: Bun's TracingChannel has no `hasSubscribers` of its own.)
 */
export function traced<M extends object, T>(
  traceChannel: TracingChannel<unknown, M>,
  message: () => NoInfer<M>,
  fn: (message: M | undefined) => Promise<T>,
): Promise<T> {
  if (!traceChannel.start.hasSubscribers) {
    return fn(undefined);
  }
  const made = message();
  return traceChannel.tracePromise(() => fn(made), made);
}

/** traced() for synchronous work. */
export function tracedSync<M extends object, T>(
  traceChannel: TracingChannel<unknown, M>,
  message: () => NoInfer<M>,
  fn: (message: M | undefined) => T,
): T {
  if (!traceChannel.start.hasSubscribers) {
    return fn(undefined);
  }
  const made = message();
  return traceChannel.traceSync(() => fn(made), made);
}
