// OpenTelemetry tracing, loaded only when OTEL_* asks for traces (server.ts imports this module
// then, and nothing else does): the SDK's small pieces — a tracer provider, a batch processor with
// a bounded queue, the OTLP/HTTP exporter — and a subscriber to the origin's own channels, not
// sdk-node with auto-instrumentation, which cannot reach into a bundled app without a loader and
// does not cover node:http2.
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  type SpanContext,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import {
  CompositePropagator,
  ExportResultCode,
  isTracingSuppressed,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { logContextFrom, throttledWarning } from '../../logger.ts';
import { ChannelContextManager } from './channel-context.ts';
import { traceFetches } from './fetch-spans.ts';
import { RequestIds } from './request-span.ts';
import { samplersOf } from './samplers.ts';
import { traceChannels } from './spans.ts';
import type { TracingSettings } from './tracing-settings.ts';

/** Tracing, running: its counts for /healthz, and how it stops. */
export interface Tracing {
  readonly stats: TracingStats;
  /** Exports what is buffered, within the exporter's timeout, and stops. */
  shutdown(): Promise<void>;
}

export interface TracingStats {
  /** Spans sampled and ended: handed to the batch processor. */
  ended: number;
  /** Spans the collector accepted. */
  exported: number;
  /** Spans in exports that failed (the collector down or refusing): dropped, never retried forever. */
  failed: number;
  /** Spans dropped because the queue was full (counted as the processor reports them). */
  dropped: number;
}

export function startTracing(
  settings: TracingSettings,
  { engine, log }: { engine: string; log: Logger },
): Tracing {
  const stats: TracingStats = { ended: 0, exported: 0, failed: 0, dropped: 0 };
  reportSdkTroubles(stats, log);
  const { sampler, root } = samplersOf(settings);
  const ids = new RequestIds();
  const provider = createProvider(settings, { sampler, ids }, stats, log);
  const manager = new ChannelContextManager();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: settings.propagators.map((name) =>
        name === 'baggage' ? new W3CBaggagePropagator() : new W3CTraceContextPropagator(),
      ),
    }),
  );
  const tracer = provider.getTracer('ssr-origin');
  const untraceChannels = traceChannels({
    tracer,
    sampler,
    root,
    ids,
    manager,
    trust: settings.trust,
    engine,
  });
  const untraceFetches = traceFetches(tracer, manager);
  const untrace = () => {
    untraceFetches();
    untraceChannels();
  };
  // Lines of a recorded request carry its ids; the SDK's own work (an export) is no request's.
  logContextFrom(() => {
    const active = manager.active();
    const span = trace.getSpanContext(active);
    return span === undefined || !isSampled(span) || isTracingSuppressed(active)
      ? {}
      : { trace_id: span.traceId, span_id: span.spanId };
  });
  log.info(
    { url: settings.url, sampler: settings.sampler, ratio: settings.ratio, trust: settings.trust },
    'tracing: exporting spans over OTLP/HTTP',
  );
  return {
    stats,
    shutdown: async () => {
      untrace();
      await provider.shutdown();
    },
  };
}

/**
 * The tracer provider: the sampler, and spans batched to the OTLP/HTTP exporter through a queue
 * that is bounded (maxQueueSize: spans beyond it are dropped, whatever the collector does).
 */
function createProvider(
  settings: TracingSettings,
  { sampler, ids }: { sampler: Sampler; ids: RequestIds },
  stats: TracingStats,
  log: Logger,
): TracerProvider {
  const exporter = countedExporter(
    new (settings.protocol === 'http/json' ? JsonExporter : ProtobufExporter)({
      url: settings.url,
      headers: settings.headers,
      timeoutMillis: settings.timeoutMs,
      compression: settings.compression === 'gzip' ? ('gzip' as never) : ('none' as never),
    }),
    stats,
    log,
  );
  const processor = countedProcessor(
    new BatchSpanProcessor({
      exporter,
      scheduledDelayMillis: settings.batch.scheduleDelayMs,
      exportTimeoutMillis: settings.batch.exportTimeoutMs,
      maxQueueSize: settings.batch.maxQueueSize,
      maxExportBatchSize: settings.batch.maxExportBatchSize,
    }),
    stats,
  );
  return new TracerProvider({
    resource: defaultResource()
      .merge(detectResources({ detectors: [hostDetector, envDetector] }))
      .merge(resourceFromAttributes({ 'process.pid': process.pid })),
    sampler,
    idGenerator: ids,
    spanProcessors: [processor],
  });
}

/**
 * The SDK's own troubles (OpenTelemetry's diag) in the origin's log: a full queue's dropped spans
 * counted and warned of, throttled; anything else it says at debug level.
 */
function reportSdkTroubles(stats: TracingStats, log: Logger): void {
  const warnDropped = throttledWarning(log, 'ORIGIN_TRACES_DROPPED');
  const debug = (message: string, ...args: unknown[]) => log.debug({ args }, `tracing: ${message}`);
  diag.setLogger(
    {
      error: debug,
      warn: (message, ...args) => {
        // BatchSpanProcessor's words once spans could be queued again after some were dropped.
        const dropped = /^Dropped (\d+) spans/.exec(message);
        if (dropped === null) {
          debug(message, ...args);
          return;
        }
        stats.dropped += Number(dropped[1]);
        warnDropped();
      },
      info: debug,
      debug,
      verbose: debug,
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

/** The exporter, counting what it exported and what failed; failures are a throttled warning. */
function countedExporter(exporter: SpanExporter, stats: TracingStats, log: Logger): SpanExporter {
  const warnFailed = throttledWarning(log, 'ORIGIN_TRACES_EXPORT_FAILED');
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          stats.exported += spans.length;
        } else {
          stats.failed += spans.length;
          warnFailed();
          log.debug({ err: result.error, spans: spans.length }, 'tracing: an export failed');
        }
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The processor, counting the spans it was handed. */
function countedProcessor(processor: SpanProcessor, stats: TracingStats): SpanProcessor {
  return {
    onStart: (span, parent) => processor.onStart(span, parent),
    onEnd: (span: ReadableSpan) => {
      stats.ended++;
      processor.onEnd(span);
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
}

const SAMPLED: number = TraceFlags.SAMPLED;

function isSampled(span: SpanContext): boolean {
  return (span.traceFlags & SAMPLED) !== 0;
}
