// A request's span, decided before it is made. For a request its sampler leaves out, the SDK's
// tracer still prepares a span as for a recorded one (its attributes cleaned, its links copied)
// before it returns a non-recording one, and every step under it would do the same: at one-in-ten
// sampling, 90% of requests paid about 8 µs of server CPU for spans nobody sees
// (docs/observability.md, "What it costs"). Here the same sampler decides on the same trace id
// first (the tracer decides again for a request it records: the same answer for the same inputs).
// A request left out gets what the tracer would have given it, a non-recording span with its
// trace id and flags (which its fetches propagate), made only when asked for, and nothing else:
// the steps under it make no span (spans.ts).
import {
  type Context,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import { randomBytes } from 'node:crypto';
import { type IdGenerator, type Sampler, SamplingDecision } from '@opentelemetry/sdk-trace';
import type { RootRule } from './samplers.ts';

/** W3C Trace Context's invalid ids: all zeros. */
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

/**
 * Trace and span ids as slices of random hex, drawn 4 KiB at a time from node:crypto: 40 and 30 ns
 * an id against the SDK's RandomIdGenerator's 82 and 98 (Math.random, an id at a time), which
 * made a quarter of an unsampled request's cost (`node bench/tracing-cost.mjs`, 2026-11-28). The
 * next trace id can be handed out in advance: the one a request's sampling decision was made on,
 * so that the span the tracer makes has it.
 */
export class RequestIds implements IdGenerator {
  #hex = '';
  #at = 0;
  #next: string | undefined;

  generateTraceId(): string {
    const next = this.#next;
    if (next !== undefined) {
      this.#next = undefined;
      return next;
    }
    const id = this.#random(32);
    return id === INVALID_TRACE_ID ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    const id = this.#random(16);
    return id === INVALID_SPAN_ID ? this.generateSpanId() : id;
  }

  /** `fn()`, whose tracer's first trace id is `traceId`. */
  handingOut<T>(traceId: string, fn: () => T): T {
    this.#next = traceId;
    try {
      return fn();
    } finally {
      this.#next = undefined;
    }
  }

  #random(chars: number): string {
    if (this.#at + chars > this.#hex.length) {
      this.#hex = randomBytes(4096).toString('hex');
      this.#at = 0;
    }
    return this.#hex.slice(this.#at, (this.#at += chars));
  }
}

export interface RequestSpanMaker {
  tracer: Tracer;
  /** The sampler the tracer's provider has. */
  sampler: Sampler;
  /** What `sampler` decides for a trace with no parent. */
  root: RootRule;
  /** The id generator the tracer's provider has. */
  ids: RequestIds;
}

/**
 * The context of a request's work: its SERVER span named `name` under `parent` (the remote parent
 * when one is trusted, else the root context), as `tracer.startSpan` would make it. A trace the
 * root rule leaves out costs a trace id and the rule: its span and context are made only when
 * something asks for them (a fetch's traceparent, a log line), which a page answered from memory
 * never does.
 */
export function requestContext(
  { tracer, sampler, root, ids }: RequestSpanMaker,
  name: string,
  parent: Context,
  links: Link[] | undefined,
): Context {
  const remote = trace.getSpanContext(parent);
  const continued = remote !== undefined && trace.isSpanContextValid(remote);
  if (!continued) {
    const traceId = ids.generateTraceId();
    return root(traceId)
      ? trace.setSpan(
          parent,
          ids.handingOut(traceId, () =>
            tracer.startSpan(name, { kind: SpanKind.SERVER, links }, parent),
          ),
        )
      : new LeftOut(parent, traceId, ids);
  }
  const decision = sampler.shouldSample(
    parent,
    remote.traceId,
    name,
    SpanKind.SERVER,
    {},
    links ?? [],
  );
  if (decision.decision !== SamplingDecision.NOT_RECORD) {
    return trace.setSpan(parent, tracer.startSpan(name, { kind: SpanKind.SERVER, links }, parent));
  }
  const unsampled: SpanContext = {
    traceId: remote.traceId,
    spanId: ids.generateSpanId(),
    traceFlags: TraceFlags.NONE,
    traceState: decision.traceState ?? remote.traceState,
  };
  return trace.setSpan(parent, trace.wrapSpanContext(unsampled));
}

/** The recording span of a request's context, if its trace is recorded. */
export function recordingSpan(context: Context): Span | undefined {
  if (context instanceof LeftOut) {
    return undefined;
  }
  const span = trace.getSpan(context);
  return span?.isRecording() ? span : undefined;
}

/** Whether `context` is under a span the sampler left out (a trace nobody records). */
export function leftOut(context: Context): boolean {
  return context instanceof LeftOut || trace.getSpan(context)?.isRecording() === false;
}

/**
 * A left-out request's context: `parent` with the non-recording span the tracer would have given
 * it (its trace id, flags none, a span id of its own), made on the first question.
 */
class LeftOut implements Context {
  readonly #parent: Context;
  readonly #traceId: string;
  readonly #ids: RequestIds;
  #made: Context | undefined;

  constructor(parent: Context, traceId: string, ids: RequestIds) {
    this.#parent = parent;
    this.#traceId = traceId;
    this.#ids = ids;
  }

  getValue(key: symbol): unknown {
    return this.#context().getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.#context().setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.#context().deleteValue(key);
  }

  #context(): Context {
    return (this.#made ??= trace.setSpan(
      this.#parent,
      trace.wrapSpanContext({
        traceId: this.#traceId,
        spanId: this.#ids.generateSpanId(),
        traceFlags: TraceFlags.NONE,
      }),
    ));
  }
}
