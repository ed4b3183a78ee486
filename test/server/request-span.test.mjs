// A request's span decided before it is made (server/observe/tracing/request-span.ts) is the span
// the SDK's tracer would have made: the same sampling, on the trace id the span carries, at the
// sampler's rate; the same trace id, flags and trace state under a remote parent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SamplingDecision, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import fc from 'fast-check';
import {
  leftOut,
  recordingSpan,
  requestContext,
  RequestIds,
} from '../../server/observe/tracing/request-span.ts';
import { ratioRule, samplersOf } from '../../server/observe/tracing/samplers.ts';

/** The request's span of a context `requestContext` made (a left-out one's made on asking). */
const startRequestSpan = (maker, name, parent, links) =>
  trace.getSpan(requestContext(maker, name, parent, links));

/** The SDK's own sampler for a setting, as its documentation composes it: what the origin's must equal. */
function sdkSampler({ sampler: name, ratio, trust }) {
  const root = name.endsWith('always_on')
    ? new AlwaysOnSampler()
    : name.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new TraceIdRatioBasedSampler(ratio);
  if (!name.startsWith('parentbased_')) return root;
  return new ParentBasedSampler(
    trust === 'obey' ? { root } : { root, remoteParentSampled: root, remoteParentNotSampled: root },
  );
}

/** The origin's samplers deciding a request's span, and a tracer on the SDK's own sampler. */
function tracing(settings) {
  const { sampler, root } = samplersOf(settings);
  const ids = new RequestIds();
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: sdkSampler(settings),
    idGenerator: ids,
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('test');
  return { maker: { tracer, sampler, root, ids }, tracer, exporter, provider };
}

/** TraceIdRatioBasedSampler's rule: the id's 32-bit words XOR-ed, under ratio × (2^32 - 1). */
const picked = (traceId, ratio) => {
  let words = 0;
  for (let i = 0; i < 32; i += 8) words = (words ^ parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
  return words < Math.floor(ratio * 0xffffffff);
};

describe("a request's span, decided first", () => {
  it('samples at the ratio, on the trace id its span carries, and records what it samples', async () => {
    const { maker, exporter, provider } = tracing({
      sampler: 'parentbased_traceidratio',
      ratio: 0.5,
      trust: 'continue',
    });
    let recorded = 0;
    const runs = 4000;
    for (let i = 0; i < runs; i++) {
      const span = startRequestSpan(maker, 'GET', ROOT_CONTEXT, undefined);
      const { traceId, traceFlags } = span.spanContext();
      assert.equal(span.isRecording(), picked(traceId, 0.5), traceId);
      assert.equal(traceFlags, span.isRecording() ? TraceFlags.SAMPLED : TraceFlags.NONE);
      assert.ok(trace.isSpanContextValid(span.spanContext()));
      if (span.isRecording()) recorded++;
      span.end();
    }
    // Decided twice on two ids, a span would be recorded a quarter of the time: 4,000 draws at
    // 1/2 fall outside 0.45–0.55 with probability under 1e-9.
    assert.ok(recorded / runs > 0.45 && recorded / runs < 0.55, `${recorded} of ${runs}`);
    await provider.forceFlush();
    assert.equal(exporter.getFinishedSpans().length, recorded);
    assert.ok(exporter.getFinishedSpans().every((span) => span.kind === SpanKind.SERVER));
  });

  it('is the span the tracer makes, for any remote parent and sampler', () => {
    const samplers = {
      always_on: 'always_on',
      always_off: 'always_off',
      ratio: 'traceidratio',
      parent_ratio: 'parentbased_traceidratio',
      parent_on: 'parentbased_always_on',
    };
    const hex = (length) =>
      fc.string({
        unit: fc.constantFrom(...'0123456789abcdef'),
        minLength: length,
        maxLength: length,
      });
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(samplers)),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.option(
          fc.record({
            traceId: hex(32),
            spanId: hex(16),
            traceFlags: fc.constantFrom(TraceFlags.NONE, TraceFlags.SAMPLED),
            state: fc.constantFrom(undefined, 'vendor=a', 'a=1,b=2'),
          }),
        ),
        (name, ratio, remote) => {
          const { maker, tracer } = tracing({ sampler: samplers[name], ratio, trust: 'obey' });
          const parent =
            remote === null
              ? ROOT_CONTEXT
              : trace.setSpanContext(ROOT_CONTEXT, {
                  traceId: remote.traceId,
                  spanId: remote.spanId,
                  traceFlags: remote.traceFlags,
                  isRemote: true,
                  traceState: remote.state === undefined ? undefined : new TraceState(remote.state),
                });
          const mine = startRequestSpan(maker, 'GET', parent, undefined);
          const theirs = tracer.startSpan('GET', { kind: SpanKind.SERVER }, parent);
          const continued =
            remote !== null && trace.isSpanContextValid(trace.getSpanContext(parent));
          if (continued) {
            // The same trace: the same decision, flags and state.
            assert.equal(mine.isRecording(), theirs.isRecording());
            assert.equal(mine.spanContext().traceId, theirs.spanContext().traceId);
            assert.equal(mine.spanContext().traceFlags, theirs.spanContext().traceFlags);
            assert.equal(
              mine.spanContext().traceState?.serialize(),
              theirs.spanContext().traceState?.serialize(),
            );
          } else if (name === 'always_on' || name === 'parent_on' || name === 'always_off') {
            assert.equal(mine.isRecording(), theirs.isRecording());
          } else {
            assert.equal(mine.isRecording(), picked(mine.spanContext().traceId, ratio));
          }
          assert.ok(trace.isSpanContextValid(mine.spanContext()));
          assert.equal(
            mine.spanContext().traceFlags,
            mine.isRecording() ? TraceFlags.SAMPLED : TraceFlags.NONE,
          );
          mine.end();
          theirs.end();
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hands the decided trace id to the next span only: a trace id is never handed out twice', () => {
    const ids = new RequestIds();
    assert.equal(
      ids.handingOut('a'.repeat(32), () => ids.generateTraceId()),
      'a'.repeat(32),
    );
    assert.notEqual(ids.generateTraceId(), 'a'.repeat(32));
    // A span that continues a parent takes no trace id: the handed one is not left for the next.
    ids.handingOut('b'.repeat(32), () => ids.generateSpanId());
    assert.notEqual(ids.generateTraceId(), 'b'.repeat(32));
    assert.match(ids.generateTraceId(), /^[0-9a-f]{32}$/);
    assert.match(ids.generateSpanId(), /^[0-9a-f]{16}$/);
  });

  // Either case: the API's id check and the SDK's parse take both.
  const hexId = fc
    .string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 32, maxLength: 32 })
    .filter((id) => id !== '0'.repeat(32));
  const ratios = fc.oneof(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.constantFrom(0, 1, Number.MIN_VALUE, 1 - Number.EPSILON, 0.1, -1, 2),
  );

  it("the root rule is TraceIdRatioBasedSampler's decision, for any id and ratio", () => {
    fc.assert(
      fc.property(hexId, ratios, (traceId, ratio) => {
        const theirs = new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, traceId);
        assert.equal(
          ratioRule(ratio)(traceId),
          theirs.decision === SamplingDecision.RECORD_AND_SAMPLED,
        );
      }),
      { numRuns: 2000 },
    );
    // The words' extremes: all ones is under no bound but the whole range's.
    assert.equal(ratioRule(1)('f'.repeat(32)), true);
    assert.equal(ratioRule(1 - Number.EPSILON)('ffffffff' + '0'.repeat(24)), false);
  });

  it("each sampler setting decides as the SDK's sampler does, under any parent or none", () => {
    const names = [
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ];
    const parents = fc.option(
      fc.record({
        traceId: fc.oneof(hexId, fc.constant('0'.repeat(32))),
        spanId: fc.constantFrom('0'.repeat(16), '00f067aa0ba902b7'),
        traceFlags: fc.constantFrom(TraceFlags.NONE, TraceFlags.SAMPLED),
        isRemote: fc.boolean(),
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        ratios,
        fc.constantFrom('ignore', 'continue', 'obey'),
        hexId,
        parents,
        (name, ratio, trust, traceId, parent) => {
          const settings = { sampler: name, ratio, trust };
          const { sampler, root } = samplersOf(settings);
          const sdk = sdkSampler(settings);
          const context =
            parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
          const decide = (one) =>
            one.shouldSample(context, traceId, 'GET', SpanKind.SERVER, {}, []).decision;
          assert.equal(decide(sampler), decide(sdk));
          if (parent === null) {
            assert.equal(root(traceId), decide(sdk) === SamplingDecision.RECORD_AND_SAMPLED);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a left-out request's span is made only when asked for, as the tracer would make it", () => {
    let spanIds = 0;
    const ids = new (class extends RequestIds {
      generateSpanId() {
        spanIds++;
        return super.generateSpanId();
      }
    })();
    const { sampler, root } = samplersOf({
      sampler: 'parentbased_traceidratio',
      ratio: 0,
      trust: 'continue',
    });
    const tracer = new TracerProvider({ sampler, idGenerator: ids }).getTracer('test');
    const context = requestContext({ tracer, sampler, root, ids }, 'GET', ROOT_CONTEXT, undefined);
    // Asked whether it records, by the request's observer and the steps under it: nothing made.
    assert.equal(recordingSpan(context), undefined);
    assert.equal(leftOut(context), true);
    assert.equal(spanIds, 0);
    // Asked for its span (a fetch's traceparent): one span id, a valid context, flags none.
    const span = trace.getSpan(context);
    assert.equal(spanIds, 1);
    assert.equal(span.isRecording(), false);
    assert.ok(trace.isSpanContextValid(span.spanContext()));
    assert.equal(span.spanContext().traceFlags, TraceFlags.NONE);
    assert.equal(trace.getSpan(context), span, 'made once');
    // A value set on it (as a step does) keeps the span; the left-out context stays left out.
    const key = Symbol('step');
    const under = context.setValue(key, 1);
    assert.equal(under.getValue(key), 1);
    assert.equal(trace.getSpan(under), span);
    assert.equal(leftOut(under), true);
    assert.equal(context.deleteValue(key).getValue(key), undefined);
    // The root context is under no span: neither left out nor recorded.
    assert.equal(leftOut(ROOT_CONTEXT), false);
    assert.equal(recordingSpan(ROOT_CONTEXT), undefined);
  });
});
