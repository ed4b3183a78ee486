// The origin's own spans, published on node:diagnostics_channel tracing channels (as Nitro v3 and
// undici publish theirs): each step of a request's story announces its start and end with a message
// that says what it did. Nothing here knows OpenTelemetry: with nobody subscribed a step costs one
// `hasSubscribers` read and no message is made; the tracing module (observe/tracing/) subscribes
// when OTEL_* asks for traces, and any other tracer (an APM agent) may subscribe the same way.
//
// A request's story is told here once, step by step, and every observer is a subscriber: the traces
// (observe/tracing/), the metrics (metrics/timings.ts), the access log, Server-Timing and the error
// counts (observe/). A step publishes what it did and knows nobody; an observer keeps what it needs
// of a request in its own state, keyed by the request's response. Request-scoped messages carry
// that response (`res`); what happens deeper (a render, a fetch, a Redis call) is a span of the
// request it runs in, by the tracer's context.
import { channel, type TracingChannel, tracingChannel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How a request was answered: before Koa from memory (fast-path.ts), or by the Koa chain. */
export type Entrance = 'fast-path' | 'koa';

/** How a page of the app was made for this answer. */
export type RenderMode = 'prerendered' | 'server' | 'client';

/** What a render that made an answer's page took (for this request, or one it joined). */
export interface RenderTiming {
  /** Waiting for a render slot. */
  queueMs: number;
  /** In the slot, the page rendered (its data fetched meanwhile). */
  renderMs: number;
  /** How long the render waited on its APIs, overlapping fetches counted once. */
  dataMs: number;
  /** How the data cache answered each of its fetches, counted: `hit 2, miss 1`. */
  fetches: string;
}

/** A request, from its arrival to its response's end (`asyncEnd`), on either entrance and protocol. */
export interface RequestMessage {
  req: IncomingMessage;
  res: ServerResponse;
}

/**
 * What answers a request, named by the step that found it: the app's route template
 * (`/products/:id`), `/{file}` for a file of the build, an origin endpoint's own path, never the
 * URL. A request refused before any route was looked at is never named.
 */
export interface RouteMessage {
  res: ServerResponse;
  route: string;
  /** A page's render mode. */
  mode?: RenderMode;
  /** A page's locale, in a localized build. */
  locale?: string;
  /** Answered before Koa: the fast path's. */
  entrance?: Entrance;
}

/** How the render cache answered a page request, and the render behind it when one ran for it. */
export interface PageServedMessage {
  res: ServerResponse;
  /** `hit`, `stale`, `miss`, `coalesced`, `shared`, `bypass`. */
  cache?: string;
  render?: RenderTiming;
}

/**
 * An answer's head, about to be written (http/answer.ts): a subscriber may add headers of its own
 * to `headers` (Server-Timing).
 */
export interface AnswerMessage {
  req: IncomingMessage;
  res: ServerResponse;
  status: number;
  /** Name, value pairs the subscribers add. */
  headers: string[];
}

/** A failure with its code (errors.ts: an ErrorCode), and the request it failed when one did. */
export interface ErrorMessage {
  code: string;
  res?: ServerResponse;
  error?: unknown;
}

/** A render's request to an API, ended: its host (bounded by the data cache) and how long it took. */
export interface UpstreamEndedMessage {
  host: string;
  seconds: number;
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
  /** Set at the end, however it ended: its time in the slot. */
  ms?: number;
}

/** A visitor's personal parts of a page, rendered by the app's renderPart in a slot (personal/). */
export interface PartRenderMessage {
  /** The page's server route (`/products/:id`). */
  route: string;
  /** The parts' names, space-separated. */
  parts: string;
  /** Set at the end: Angular's ErrorHandler reported an error; its time in the slot. */
  reportedError?: boolean;
  ms?: number;
}

/**
 * How a visitor's part of a page was served: `hit` (kept for this visitor), `rendered`,
 * `placeholder` (no cookie of the part: anonymous), `failed`, `timeout`, `shed`.
 */
export interface PartServedMessage {
  res: ServerResponse;
  part: string;
  outcome: PartOutcome;
}

export type PartOutcome = 'hit' | 'rendered' | 'placeholder' | 'failed' | 'timeout' | 'shed';

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
  /**
   * A request's work that may outlive its arrival (the Koa chain), run by `runStores` with the
   * request's message: where an observer binds a store it keeps for the request's work (the
   * tracer's context). An answer from memory runs here only when an observer asked (`enterAll`):
   * entering a store cost 6% of such an answer's server CPU (the bench's paired ssg,
   * OTEL_TRACES_SAMPLER_ARG=0, 2026-12-07), and nothing under it reads one but a log line.
   */
  requestWork: channel('origin:request.work'),
  cacheLookup: tracingChannel<unknown, CacheLookupMessage>('origin:cache.lookup'),
  cacheFill: tracingChannel<unknown, CacheFillMessage>('origin:cache.fill'),
  cacheRefresh: tracingChannel<unknown, CacheRefreshMessage>('origin:cache.refresh'),
  renderQueue: tracingChannel<unknown, RenderQueueMessage>('origin:render.queue'),
  render: tracingChannel<unknown, RenderMessage>('origin:render'),
  partRender: tracingChannel<unknown, PartRenderMessage>('origin:part.render'),
  criticalCss: tracingChannel<unknown, CriticalCssMessage>('origin:render.critical-css'),
  compress: tracingChannel<unknown, CompressMessage>('origin:cache.compress'),
  revalidate: tracingChannel<unknown, RevalidateMessage>('origin:revalidate'),
  redis: tracingChannel<unknown, RedisMessage>('origin:redis'),
  dataFetch: tracingChannel<unknown, DataFetchMessage>('origin:data.fetch'),
  coalesced: channel('origin:cache.coalesced'),
  upstream: channel('origin:data.upstream'),
  upstreamEnded: channel('origin:data.upstream.ended'),
  route: channel('origin:route'),
  pageServed: channel('origin:page.served'),
  partServed: channel('origin:part.served'),
  answer: channel('origin:answer'),
  error: channel('origin:error'),
};

/** Whether anyone listens to a tracing channel, on any of its events. */
export function observed(traceChannel: TracingChannel<unknown, object>): boolean {
  return (
    traceChannel.start.hasSubscribers ||
    traceChannel.end.hasSubscribers ||
    traceChannel.asyncEnd.hasSubscribers
  );
}

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
  if (!observed(traceChannel)) {
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
  if (!observed(traceChannel)) {
    return fn(undefined);
  }
  const made = message();
  return traceChannel.traceSync(() => fn(made), made);
}

/** Symbol marking a response whose request an observer follows: see `follow`. */
const FOLLOWED = Symbol('origin.followed');

/**
 * Says an observer follows the request of `res`: called by a subscriber of `request.start`. The
 * steps tell the story of a followed request only (its route, how a cache served it, its answer's
 * head), so that a request nobody follows costs no message: one the tracer's sampler left out,
 * with no other observer on.
 */
export function follow(res: ServerResponse): void {
  (res as ServerResponse & { [FOLLOWED]?: true })[FOLLOWED] = true;
}

/** Whether an observer follows the request of `res` (follow). */
export function followed(res: ServerResponse): boolean {
  return (res as ServerResponse & { [FOLLOWED]?: true })[FOLLOWED] === true;
}

/** Symbol marking a response whose request's whole work runs in observers' stores: see `enterAll`. */
const ENTERED = Symbol('origin.entered');

/**
 * Says an observer keeps a store for all of the request of `res`'s work (requestWork), its answer
 * from memory too: the tracer, for a request it records, whose log lines carry its trace. Called
 * by a subscriber of `request.start`.
 */
export function enterAll(res: ServerResponse): void {
  (res as ServerResponse & { [ENTERED]?: true })[ENTERED] = true;
}

/** Whether all of the request of `res`'s work runs on requestWork (enterAll). */
export function enteredAll(res: ServerResponse): boolean {
  return (res as ServerResponse & { [ENTERED]?: true })[ENTERED] === true;
}

/** Symbol marking a response whose request a step named (RouteMessage): see `named`. */
const NAMED = Symbol('origin.named');

/** Says what answers a request (RouteMessage), when an observer follows it. */
export function nameRequest(message: RouteMessage): void {
  if (channels.route.hasSubscribers && followed(message.res)) {
    (message.res as ServerResponse & { [NAMED]?: true })[NAMED] = true;
    channels.route.publish(message);
  }
}

/** Marks the request of `res` as one no observer names (refused before any route was looked at). */
export function leaveUnnamed(res: ServerResponse): void {
  (res as ServerResponse & { [NAMED]?: true })[NAMED] = true;
}

/** Whether a step named the request of `res` (nameRequest, leaveUnnamed). */
export function named(res: ServerResponse): boolean {
  return (res as ServerResponse & { [NAMED]?: true })[NAMED] === true;
}

/**
 * Says how the render cache served a page request, and the render behind it, when an observer
 * follows it.
 */
export function pageServed(message: PageServedMessage): void {
  if (channels.pageServed.hasSubscribers && followed(message.res)) {
    channels.pageServed.publish(message);
  }
}

/** Says how a visitor's part was served; every part is told (its counts are the metrics'). */
export function partServed(message: PartServedMessage): void {
  if (channels.partServed.hasSubscribers) {
    channels.partServed.publish(message);
  }
}
