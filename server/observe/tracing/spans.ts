// The origin's channels (observe/channels.ts) as OpenTelemetry spans: each message's start opens a
// span, active for the work it traces (the channel's store is the tracer's context), and its end
// closes it with what the message says it found. One SERVER span per request on either entrance
// and protocol, named by route; under it the cache lookups, the render's wait and the render, and a
// CLIENT span per fetch of the render, whose trace context goes on to the API.
import type { TracingChannel } from 'node:diagnostics_channel';
import {
  type Attributes,
  type Context,
  createContextKey,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import {
  type CacheFillMessage,
  type CacheRefreshMessage,
  channels,
  type CoalescedMessage,
  enterAll,
  follow,
  type ErrorMessage,
  type PageServedMessage,
  type PartServedMessage,
  type RequestMessage,
  type RouteMessage,
  type UpstreamMessage,
} from '../../channels.ts';
import type { ChannelContextManager } from './channel-context.ts';
import { leftOut, recordingSpan, requestContext, type RequestSpanMaker } from './request-span.ts';
import type { ParentTrust } from './tracing-settings.ts';

/** The SDK's default link limit: a render waited on by more requests links to the first 128. */
const MAX_LINKS = 128;

/** A production's render, and the requests that joined it before its render span began. */
interface Fill {
  render: Span | undefined;
  waiting: Link[];
}

/** A request's context, on its response: made at its arrival, entered for its work. */
const CONTEXT = Symbol('origin.trace-context');
type Contextual = ServerResponse & { [CONTEXT]?: Context };

/** The production a piece of work belongs to, in the tracer's context. */
const FILL = createContextKey('origin fill');

/** What a request's span learns before its end, from the steps' messages. */
interface Told {
  route?: RouteMessage;
  cache?: string;
  error?: ErrorMessage;
  /** How each personal part was served: `greeting=hit`. */
  parts?: string[];
}

export interface SpanOptions extends RequestSpanMaker {
  manager: ChannelContextManager;
  trust: ParentTrust;
  /** The rendering engine (`common`, `app`), on every request's span. */
  engine: string;
}

/** Subscribes to the origin's channels; returns what undoes it. */
export function traceChannels(options: SpanOptions): () => void {
  const spans = new ChannelSpans(options);
  spans.arrivals();
  spans.requests();
  spans.caches();
  spans.renders();
  spans.parts();
  spans.work();
  spans.calls();
  return () => spans.unsubscribe();
}

class ChannelSpans {
  readonly #tracer: Tracer;
  readonly #maker: RequestSpanMaker;
  readonly #manager: ChannelContextManager;
  readonly #trust: ParentTrust;
  readonly #engine: string;
  readonly #spans = new WeakMap<object, Span>();
  /** The recording SERVER span of each traced request, and what the steps told of it. */
  readonly #requests = new WeakMap<ServerResponse, { span: Span; told: Told }>();
  readonly #fills = new WeakMap<object, Fill>();
  readonly #undo: (() => void)[] = [];

  constructor({ tracer, sampler, root, ids, manager, trust, engine }: SpanOptions) {
    this.#tracer = tracer;
    this.#maker = { tracer, sampler, root, ids };
    this.#manager = manager;
    this.#trust = trust;
    this.#engine = engine;
  }

  unsubscribe(): void {
    for (const step of this.#undo.reverse()) {
      step();
    }
  }

  /** A request's arrival: the incoming traceparent continued (or not, as trusted), its context. */
  arrivals(): void {
    const { storage } = this.#manager;
    // The propagators' headers: a request with none of them has nothing to extract.
    const fields = propagation.fields();
    const arrived = ({ req, res }: RequestMessage) => {
      const remote = carries(req.headers, fields)
        ? propagation.extract(ROOT_CONTEXT, req.headers)
        : ROOT_CONTEXT;
      const remoteSpan = trace.getSpanContext(remote);
      const ignore = this.#trust === 'ignore';
      const parent = ignore ? ROOT_CONTEXT : remote;
      const context = requestContext(
        this.#maker,
        req.method ?? 'GET',
        parent,
        ignore && remoteSpan !== undefined ? [{ context: remoteSpan }] : undefined,
      );
      // A request the sampler left out costs its decision and its context, nothing more: the
      // tracer does not follow it.
      const span = recordingSpan(context);
      if (span !== undefined) {
        follow(res);
        enterAll(res);
        span.setAttributes(requestAttributes(req, this.#engine));
        this.#requests.set(res, { span, told: {} });
      }
      (res as Contextual)[CONTEXT] = context;
    };
    channels.request.start.subscribe(arrived as never);
    this.#undo.push(() => {
      channels.request.start.unsubscribe(arrived as never);
      channels.requestWork.unbindStore(storage);
    });
    // The request's context, entered for its work (all of it, when the request is recorded).
    channels.requestWork.bindStore(
      storage,
      (message) => ((message as RequestMessage).res as Contextual)[CONTEXT] ?? ROOT_CONTEXT,
    );
  }

  /** A request's span, told what the steps found and named at its end. */
  requests(): void {
    const ended = {
      asyncEnd: ({ req, res }: RequestMessage) => {
        const request = this.#requests.get(res);
        if (request !== undefined) {
          this.#requests.delete(res);
          endRequest(request.span, req, res, request.told);
        }
      },
    };
    const told = (what: (told: Told, message: never) => void) => (message: unknown) => {
      const request = this.#requests.get((message as { res?: ServerResponse }).res!);
      if (request !== undefined) {
        what(request.told, message as never);
      }
    };
    const route = told((it, message: RouteMessage) => (it.route = message));
    const served = told((it, { cache }: PageServedMessage) => (it.cache = cache ?? it.cache));
    const failed = told((it, message: ErrorMessage) => (it.error = message));
    const part = told((it, { part: name, outcome }: PartServedMessage) =>
      (it.parts ??= []).push(`${name}=${outcome}`),
    );
    channels.request.subscribe(ended as never);
    channels.route.subscribe(route);
    channels.pageServed.subscribe(served);
    channels.error.subscribe(failed);
    channels.partServed.subscribe(part);
    this.#undo.push(() => {
      channels.partServed.unsubscribe(part);
      channels.request.unsubscribe(ended as never);
      channels.route.unsubscribe(route);
      channels.pageServed.unsubscribe(served);
      channels.error.unsubscribe(failed);
    });
  }

  /** Lookups per tier, a render cache's fills, refreshes in traces of their own, their waiters. */
  caches(): void {
    this.#spanEach(
      channels.cacheLookup,
      ({ cache, tier }) => ({
        name: `${cache} cache ${tier === 'memory' ? 'memory' : 'redis'}`,
        attributes: { 'origin.cache.name': cache, 'origin.cache.tier': tier },
      }),
      (span, { state }) => span.setAttributes(defined({ 'origin.cache.state': state })),
    );
    // A page's production: its render and its storing, linked to the requests that waited.
    this.#spanEach(channels.cacheFill, ({ cache, flight }: CacheFillMessage, parent) => {
      if (cache !== 'render') {
        // A fetch's production is the fetch span's own work: no span of its own.
        return undefined;
      }
      const fill: Fill = { render: undefined, waiting: [] };
      this.#fills.set(flight, fill);
      return { name: 'render cache fill', context: parent.setValue(FILL, fill) };
    });
    // A background refresh: its own trace (sampled on its own), linked to the request that found
    // the entry stale.
    this.#spanEach(
      channels.cacheRefresh,
      ({ cache, flight }: CacheRefreshMessage, parent) => {
        const fill: Fill = { render: undefined, waiting: [] };
        this.#fills.set(flight, fill);
        const asker = trace.getSpanContext(parent);
        return {
          name: `${cache} cache refresh`,
          root: true,
          links: asker === undefined ? undefined : [{ context: asker }],
          context: ROOT_CONTEXT.setValue(FILL, fill),
          attributes: { 'origin.cache.name': cache },
        };
      },
      undefined,
      { ownTrace: true },
    );
    const coalesced = (message: unknown) => {
      const fill = this.#fills.get((message as CoalescedMessage).flight);
      const waiter = trace.getSpanContext(this.#manager.active());
      if (fill === undefined || waiter === undefined) {
        return;
      }
      if (fill.render !== undefined) {
        fill.render.addLink({ context: waiter });
      } else if (fill.waiting.length < MAX_LINKS) {
        fill.waiting.push({ context: waiter });
      }
    };
    channels.coalesced.subscribe(coalesced);
    this.#undo.push(() => channels.coalesced.unsubscribe(coalesced));
  }

  /** The wait for a slot and the render, which links to the requests its production kept waiting. */
  renders(): void {
    this.#spanEach(channels.renderQueue, ({ background }) => ({
      name: 'render queue',
      attributes: { 'origin.render.background': background },
    }));
    this.#spanEach(
      channels.render,
      ({ route, background }, parent) => {
        const fill = parent.getValue(FILL) as Fill | undefined;
        return {
          name: `render ${route}`,
          attributes: { 'http.route': route, 'origin.render.background': background },
          links: fill?.waiting,
          // Requests that join its production from now on link to it as they come.
          opened: (span) => {
            if (fill !== undefined && fill.render === undefined) {
              fill.render = span;
            }
          },
        };
      },
      (span, { status, reportedError }) => {
        span.setAttributes(defined({ 'origin.render.status': status }));
        if (reportedError) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: "Angular's ErrorHandler reported an error while rendering",
          });
        }
      },
    );
  }

  /** A visitor's personal parts of a page, rendered (pages/personal/). */
  parts(): void {
    this.#spanEach(
      channels.partRender,
      ({ route, parts }) => ({
        name: `render parts ${route}`,
        attributes: { 'http.route': route, 'origin.parts': parts },
      }),
      (span, { reportedError }) => {
        if (reportedError) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: "Angular's ErrorHandler reported an error while rendering",
          });
        }
      },
    );
  }

  /** Critical CSS, a stored page's compression, revalidations. */
  work(): void {
    this.#spanEach(channels.criticalCss, ({ bytes }) => ({
      name: 'critical css',
      attributes: { 'origin.page.bytes': bytes },
    }));
    this.#spanEach(channels.compress, ({ bytes }) => ({
      name: 'compress page',
      attributes: { 'origin.page.bytes': bytes },
    }));
    this.#spanEach(
      channels.revalidate,
      ({ mode, paths, groups }) => ({
        name: 'revalidate',
        attributes: {
          'origin.revalidate.mode': mode,
          'origin.revalidate.paths': paths,
          'origin.revalidate.groups': groups,
        },
      }),
      (span, { affected }) =>
        span.setAttributes(defined({ 'origin.revalidate.affected': affected })),
    );
  }

  /** Calls out: Redis, and a render's fetches, whose trace goes on at the API. */
  calls(): void {
    this.#spanEach(
      channels.redis,
      ({ operation }) => ({
        name: `redis ${operation}`,
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': 'redis', 'db.operation.name': operation },
      }),
      (span, { outcome }) => {
        span.setAttributes(defined({ 'origin.redis.outcome': outcome }));
        if (outcome !== undefined && outcome !== 'ok') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        }
      },
    );
    this.#spanEach(channels.dataFetch, ({ method, url }) => fetchSpan(method, url), endFetch);
    // Its traceparent names the fetch's span.
    const upstream = (message: unknown) => {
      propagation.inject(this.#manager.active(), (message as UpstreamMessage).headers, {
        set: (carrier, name, value) => carrier.set(name, value),
      });
    };
    channels.upstream.subscribe(upstream);
    this.#undo.push(() => channels.upstream.unsubscribe(upstream));
  }

  /**
   * A child span per message of `traceChannel`, as `describe` says, closed by `finish`. Under a span
   * the sampler left out, none (its children would be left out too: the samplers decide by the
   * parent or by the trace id they share) unless the work is a trace of its own (`ownTrace`).
   */
  #spanEach<M extends object>(
    traceChannel: TracingChannel<unknown, M>,
    describe: (message: M, parent: Context) => Described | undefined,
    finish?: (span: Span, message: M) => void,
    { ownTrace = false } = {},
  ): void {
    const { storage } = this.#manager;
    traceChannel.start.bindStore(storage, (message) => {
      const parent = storage.getStore() ?? ROOT_CONTEXT;
      if (!ownTrace && leftOut(parent)) {
        return parent;
      }
      const described = describe(message, parent);
      if (described === undefined) {
        return parent;
      }
      const { name, kind = SpanKind.INTERNAL, attributes, links, root } = described;
      const span = this.#tracer.startSpan(name, { kind, attributes, links, root }, parent);
      this.#spans.set(message, span);
      described.opened?.(span);
      return trace.setSpan(described.context ?? parent, span);
    });
    const close = (message: M) => {
      const span = this.#spans.get(message);
      if (span !== undefined) {
        this.#spans.delete(message);
        if (span.isRecording()) {
          finish?.(span, message);
        }
        span.end();
      }
    };
    const subscribers = {
      // traceSync's end comes with its result or error; tracePromise's before it settles.
      end: (message: M) => {
        if ('result' in message || 'error' in message) {
          close(message);
        }
      },
      asyncEnd: close,
      error: (message: M & { error?: unknown }) => {
        const span = this.#spans.get(message);
        if (span !== undefined) {
          failed(span, message.error);
        }
      },
    };
    traceChannel.subscribe(subscribers as never);
    this.#undo.push(() => {
      traceChannel.unsubscribe(subscribers as never);
      traceChannel.start.unbindStore(storage);
    });
  }
}

/** Whether `headers` hold any of the propagators' `fields`. */
function carries(headers: IncomingHttpHeaders, fields: string[]): boolean {
  for (const field of fields) {
    if (headers[field] !== undefined) {
      return true;
    }
  }
  return false;
}

/** What a request's span knows as it starts: never its query string, never a header but the trace's. */
function requestAttributes(req: RequestMessage['req'], engine: string): Attributes {
  const target = req.url ?? '/';
  const query = target.indexOf('?');
  return {
    'http.request.method': req.method,
    'url.path': query === -1 ? target : target.slice(0, query),
    'url.scheme': (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    'network.protocol.version': req.httpVersionMajor >= 2 ? '2' : req.httpVersion,
    'origin.engine': engine,
  };
}

/** A request's span at its end: named by its route, with what the steps told of it. */
function endRequest(
  span: Span,
  req: RequestMessage['req'],
  res: ServerResponse,
  { route, cache, error, parts }: Told,
): void {
  const method = req.method ?? 'GET';
  span.updateName(route === undefined ? method : `${method} ${route.route}`);
  const status = res.statusCode;
  span.setAttributes(
    defined({
      'http.response.status_code': status,
      'http.route': route?.route,
      'origin.answer': route?.entrance ?? 'koa',
      'origin.render_mode': route?.mode,
      'origin.locale': route?.locale,
      'origin.cache': cache,
      'origin.parts': parts?.join(' '),
      'origin.error.code': error?.code,
      'origin.aborted': res.writableFinished ? undefined : true,
    }),
  );
  if (error?.error !== undefined) {
    span.recordException(error.error as Error);
  }
  // A 4xx is the client's doing: not an error of the server's span (OpenTelemetry's HTTP rules).
  if (status >= 500) {
    span.setAttribute('error.type', error?.code ?? String(status));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error?.code });
  }
  span.end();
}

/** A fetch: a CLIENT span named by its method and host. */
export function fetchSpan(method: string, url: URL): Described {
  return {
    name: `${method} ${url.host}`,
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      // Never the URL's credentials.
      'url.full': `${url.origin}${url.pathname}${url.search}`,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    },
  };
}

function endFetch(span: Span, { outcome, status }: { outcome?: string; status?: number }): void {
  span.setAttributes(
    defined({ 'http.response.status_code': status, 'origin.data.outcome': outcome }),
  );
  if (outcome === 'error' || (status !== undefined && status >= 500)) {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** What a message's span is: its name and the rest of what startSpan takes. */
interface Described {
  name: string;
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** A trace of its own. */
  root?: boolean;
  /** The context its span goes into, when not its parent's. */
  context?: Context;
  /** Told the span once it is started. */
  opened?: (span: Span) => void;
}

/** Records an error on a span. */
export function failed(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException(error);
  }
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/**
 * Attributes without the undefined ones. A for-in loop: `Object.entries` made this the costliest
 * line of a recorded request's span, 2.8 µs of its ~40 (a CPU profile of ssg, every request
 * traced, 2026-12-07).
 */
function defined(attributes: Record<string, string | number | boolean | undefined>): Attributes {
  const kept: Attributes = {};
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== undefined) {
      kept[name] = value;
    }
  }
  return kept;
}
