// How the standard OpenTelemetry variables are read (config.ts's table holds them with the rest):
// each value checked at startup, so that a typo stops the start in one line instead of tracing
// nothing. Nothing here loads the SDK.
/**
 * What an incoming `traceparent` may do (TRACEPARENT): `continue` its trace, sampling by this
 * origin's own sampler (a visitor cannot have every request recorded); `obey` its sampled flag too
 * (only your own proxies reach the origin); `ignore` it, starting a trace linked to it.
 */
export type ParentTrust = 'continue' | 'obey' | 'ignore';

export const PARENT_TRUSTS: readonly ParentTrust[] = ['continue', 'obey', 'ignore'];

export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

/** The tracing settings, from OTEL_* and TRACEPARENT (config.ts checks every value). */
export interface TracingSettings {
  /** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  timeoutMs: number;
  compression: 'gzip' | 'none';
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers. */
  ratio: number;
  batch: {
    scheduleDelayMs: number;
    exportTimeoutMs: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
  propagators: readonly ('tracecontext' | 'baggage')[];
  trust: ParentTrust;
}

export const SAMPLERS: readonly SamplerName[] = [
  // The specification's default.
  'parentbased_always_on',
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** OTLP over HTTP; gRPC would bring a second transport and its dependencies. */
export const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/** An OTLP endpoint: an http(s) URL. */
export function otlpEndpoint(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(`must be an http(s) URL such as http://collector:4318, got "${value}"`);
  }
  return value;
}

export function otlpProtocol(value: string): (typeof PROTOCOLS)[number] {
  if (value === 'grpc') {
    throw new Error(
      "grpc is not supported: use http/protobuf (the collector's OTLP/HTTP port, 4318)",
    );
  }
  if (!(PROTOCOLS as readonly string[]).includes(value)) {
    throw new Error(`must be one of ${PROTOCOLS.join(', ')}, got "${value}"`);
  }
  return value as (typeof PROTOCOLS)[number];
}

/**
 * `key=value,key=value`, values percent-encoded (the W3C Baggage format the specification uses for
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES).
 */
export function keyValueList(value: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of value.split(',')) {
    const at = item.indexOf('=');
    const key = item.slice(0, at).trim();
    let decoded: string | undefined;
    try {
      decoded = at > 0 ? decodeURIComponent(item.slice(at + 1).trim()) : undefined;
    } catch {
      decoded = undefined;
    }
    if (decoded === undefined || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key)) {
      throw new Error(`must be key=value pairs separated by commas, got "${value}"`);
    }
    pairs[key] = decoded;
  }
  return pairs;
}

/** A ratio from 0 to 1 (OTEL_TRACES_SAMPLER_ARG). */
export function ratio(value: string): number {
  const number = Number(value);
  if (!/^\d*\.?\d+$/.test(value) || number < 0 || number > 1) {
    throw new Error(`must be a number from 0 to 1, got "${value}"`);
  }
  return number;
}

/** OTEL_PROPAGATORS: what carries the trace context in and out. */
export function propagatorList(value: string): ('tracecontext' | 'baggage')[] {
  const names = value.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === 'none') {
    return [];
  }
  for (const name of names) {
    if (name !== 'tracecontext' && name !== 'baggage') {
      throw new Error(`must be tracecontext, baggage (comma-separated) or none, got "${value}"`);
    }
  }
  return [...new Set(names as ('tracecontext' | 'baggage')[])];
}

/** The variables config.ts read, as this module needs them. */
export interface TracingValues {
  OTEL_SDK_DISABLED: boolean;
  OTEL_TRACES_EXPORTER: 'otlp' | 'none';
  OTEL_EXPORTER_OTLP_ENDPOINT: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string | undefined;
  OTEL_EXPORTER_OTLP_PROTOCOL: (typeof PROTOCOLS)[number];
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: (typeof PROTOCOLS)[number] | undefined;
  OTEL_EXPORTER_OTLP_HEADERS: Record<string, string> | undefined;
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Record<string, string> | undefined;
  OTEL_EXPORTER_OTLP_TIMEOUT: number;
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: number | undefined;
  OTEL_EXPORTER_OTLP_COMPRESSION: 'none' | 'gzip';
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none' | 'gzip' | undefined;
  OTEL_TRACES_SAMPLER: SamplerName;
  OTEL_TRACES_SAMPLER_ARG: number | undefined;
  OTEL_BSP_SCHEDULE_DELAY: number;
  OTEL_BSP_EXPORT_TIMEOUT: number;
  OTEL_BSP_MAX_QUEUE_SIZE: number;
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: number;
  OTEL_PROPAGATORS: ('tracecontext' | 'baggage')[];
  TRACEPARENT: ParentTrust;
}

/**
 * The tracing settings, or undefined when nothing asks for traces: on once an OTLP endpoint is set
 * (or OTEL_TRACES_EXPORTER=otlp, to the specification's default, http://localhost:4318), unless
 * OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none. Returns a message for settings that are each
 * valid but not together.
 */
export function tracingSettings(
  v: TracingValues,
  env: NodeJS.ProcessEnv,
): TracingSettings | undefined | { error: string } {
  if (v.OTEL_TRACES_SAMPLER_ARG !== undefined && !v.OTEL_TRACES_SAMPLER.endsWith('traceidratio')) {
    return {
      error: 'OTEL_TRACES_SAMPLER_ARG needs OTEL_TRACES_SAMPLER=(parentbased_)traceidratio',
    };
  }
  if (v.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > v.OTEL_BSP_MAX_QUEUE_SIZE) {
    return { error: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE' };
  }
  const asked =
    v.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
    v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined ||
    env['OTEL_TRACES_EXPORTER']?.trim() === 'otlp';
  if (!asked || v.OTEL_SDK_DISABLED || v.OTEL_TRACES_EXPORTER === 'none') {
    return undefined;
  }
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  return {
    url: v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base.replace(/\/+$/, '')}/v1/traces`,
    protocol: v.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? v.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: { ...v.OTEL_EXPORTER_OTLP_HEADERS, ...v.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    timeoutMs: v.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? v.OTEL_EXPORTER_OTLP_TIMEOUT,
    compression: v.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? v.OTEL_EXPORTER_OTLP_COMPRESSION,
    sampler: v.OTEL_TRACES_SAMPLER,
    ratio: v.OTEL_TRACES_SAMPLER_ARG ?? 1,
    batch: {
      scheduleDelayMs: v.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMs: v.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: v.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: v.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    },
    propagators: v.OTEL_PROPAGATORS,
    trust: v.TRACEPARENT,
  };
}
