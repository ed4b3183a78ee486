// The sampler OTEL_TRACES_SAMPLER names, twice: the SDK's, which the tracer runs for every span it
// makes, and its rule for a trace with no parent (a request arriving without a trace it continues),
// which the request's span applies first on the trace id it draws (request-span.ts) without a
// context, a decision object or a validation of an id it made itself, and which the tracer's
// sampler applies too for such a trace.
import { type Attributes, type Context, type Link, SpanKind, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from './tracing-settings.ts';

/** Whether a trace with no parent, of a valid `traceId`, is recorded: as the SDK's root sampler says. */
export type RootRule = (traceId: string) => boolean;

export interface Samplers {
  /** The tracer provider's. */
  sampler: Sampler;
  /** What `sampler` decides for a trace with no parent. */
  root: RootRule;
}

/**
 * The sampler OTEL_TRACES_SAMPLER names. A parent-based one follows a parent of this process
 * always; a remote parent's sampled flag only under TRACEPARENT=obey: otherwise a visitor's
 * `traceparent` could have every request recorded.
 */
export function samplersOf({
  sampler,
  ratio,
  trust,
}: Pick<TracingSettings, 'sampler' | 'ratio' | 'trust'>): Samplers {
  const always = sampler.endsWith('always_on')
    ? true
    : sampler.endsWith('always_off')
      ? false
      : undefined;
  const root: Sampler =
    always === true
      ? new AlwaysOnSampler()
      : always === false
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  const rule = always === undefined ? ratioRule(ratio) : () => always;
  const sdk = !sampler.startsWith('parentbased_')
    ? root
    : new ParentBasedSampler(
        trust === 'obey'
          ? { root }
          : { root, remoteParentSampled: root, remoteParentNotSampled: root },
      );
  return { sampler: new RootRuleFirst(sdk, rule), root: rule };
}

const SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
const DROPPED: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

/**
 * The SDK's sampler, with the root rule deciding a span with no valid parent (a request's, a
 * refresh's trace): as the SDK's would, without its id check and parse, and one decision object
 * for all.
 */
class RootRuleFirst implements Sampler {
  readonly #sdk: Sampler;
  readonly #root: RootRule;

  constructor(sdk: Sampler, root: RootRule) {
    this.#sdk = sdk;
    this.#root = root;
  }

  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (parent === undefined || !trace.isSpanContextValid(parent)) {
      return this.#root(traceId) ? SAMPLED : DROPPED;
    }
    return this.#sdk.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return this.#sdk.toString();
  }
}

/**
 * TraceIdRatioBasedSampler's rule: the trace id's four 32-bit words XOR-ed, under
 * ratio × (2^32 − 1), every id at 1. The SDK validates the id with a regular expression and parses
 * it on every call: a third of what a request the sampler leaves out cost (a CPU profile of the
 * ssg scenario at OTEL_TRACES_SAMPLER_ARG=0, 2026-12-07).
 */
export function ratioRule(ratio: number): RootRule {
  const normal = Number.isNaN(ratio) ? 0 : Math.min(Math.max(ratio, 0), 1);
  const bound = normal === 1 ? 2 ** 32 : Math.floor(normal * 0xffffffff);
  if (bound === 0) {
    return () => false;
  }
  return (traceId) => {
    let words = 0;
    for (let i = 0; i < 32; i += 8) {
      let word = 0;
      for (let j = i; j < i + 8; j++) {
        const c = traceId.charCodeAt(j);
        // '0'–'9', 'A'–'F', 'a'–'f': the SDK reads either case.
        word = (word << 4) | (c < 58 ? c - 48 : c < 71 ? c - 55 : c - 87);
      }
      words = (words ^ word) >>> 0;
    }
    return words < bound;
  };
}
