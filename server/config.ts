// The origin's settings, read once at startup from the environment: a table that names each
// variable once with how to read it, then the sections each part of the origin is built from
// (parts.ts), typed by the modules that use them. A value that cannot be used stops the start with
// one line naming the variable.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import { availableParallelism } from 'node:os';
import {
  CSP_MODES,
  type CspDirectives,
  type CspSettings,
  parseCspDirectives,
  parseReportTo,
} from './csp/policy.ts';
import type { ArchiveBounds } from './files/asset-archive.ts';
import type { StaticIndexOptions } from './files/static-index.ts';
import { EARLY_HINTS_MODES, type EarlyHintsMode } from './hints/early-hints.ts';
import type { LogSettings } from './logger.ts';
import type { MetricsAddress } from './metrics/metrics-server.ts';
import type { TracingSettings } from './observe/tracing/tracing-settings.ts';
import {
  keyValueList,
  otlpEndpoint,
  otlpProtocol,
  PARENT_TRUSTS,
  PROTOCOLS,
  propagatorList,
  ratio,
  SAMPLERS,
  tracingSettings,
} from './observe/tracing/tracing-settings.ts';
import { CRITICAL_CSS_MODES, type CriticalCssMode } from './pages/common-engine.ts';
import type { PageSettings } from './pages/pages.ts';
import type { RenderLimits } from './pages/render-limiter.ts';
import type { ListenAddress, ProcessSettings } from './process/lifecycle.ts';
import type { RedisLinkOptions } from './redis/link.ts';
import { ADMISSIONS } from './cache/admission.ts';
import { GROUP_ALIASES, type GroupAlias } from './cache/cache-groups.ts';
import type { SharedTierSettings } from './cache/shared-tier.ts';
import type { StoreSettings } from './cache/store.ts';
import type { DataCacheSettings } from './data-cache/data-cache.ts';
import { type CdnPurgeConfig, purgeTarget } from './revalidation/cdn-purge.ts';
import { StartupError } from './startup-error.ts';
import {
  DEFAULT_ALLOWED_HOSTS,
  HOSTNAME,
  type HostRules,
  isAllowedHostPattern,
} from './request/request-origin.ts';

/** The origin's settings, by the part of the origin they set up. */
export interface OriginConfig {
  listen: ListenAddress;
  hosts: HostRules;
  /** What renders pages (docs/choosing-an-engine.md) and how their critical CSS is inlined. */
  engine: { name: RenderEngine; criticalCss: CriticalCssMode };
  limits: RenderLimits;
  pages: PageSettings;
  processes: ProcessSettings;
  /** Files from memory before Koa (fast-path.ts), and how many bytes of the build memory holds. */
  files: StaticIndexOptions & { fastPath: boolean };
  /** A 103 Early Hints before a page (over HTTP/2, or always), and `Link` on pages (hints/); or neither. */
  earlyHints: EarlyHintsMode;
  /** Undefined when RENDER_CACHE_BYTES is 0: no render cache. */
  renderCache: StoreSettings | undefined;
  /** What renders fetch (data-cache/); maxBytes 0 (DATA_CACHE_BYTES=0): accounted for, never kept. */
  dataCache: DataCacheSettings;
  /** Bytes of visitors' personal parts kept for them (pages/personal/); 0: none kept. */
  partCacheBytes: number;
  /** Undefined without REDIS_URL: each process caches alone. */
  sharedCache: { link: RedisLinkOptions; tier: SharedTierSettings } | undefined;
  /** Undefined when CSP is off. */
  csp: CspSettings | undefined;
  /** Where recent builds' hashed files are kept (files/asset-archive.ts); undefined: nowhere. */
  assetArchive: { store: 'redis' | { dir: string }; bounds: ArchiveBounds } | undefined;
  revalidation: {
    /** The bearer token of POST /_origin/revalidate; undefined: no endpoint. */
    token: string | undefined;
    /** The CDN purge hook; undefined when CDN_PURGE_URL is unset. */
    cdnPurge: CdnPurgeConfig | undefined;
  };
  /** The cookie naming a visitor's locale, which the site root of a localized build follows; undefined: none. */
  localeCookie: string | undefined;
  /**
   * The locales of a localized build this process serves (LOCALES), for one deployment per locale
   * behind path routing; undefined: every locale of the build.
   */
  locales: readonly string[] | undefined;
  /** Undefined without METRICS_PORT: no metrics at all. */
  metrics: MetricsAddress | undefined;
  /** Undefined unless OTEL_* asks for traces (docs/observability.md). */
  tracing: TracingSettings | undefined;
  /** SERVER_TIMING: a Server-Timing header on every answer (off: it tells visitors how the server spends time). */
  serverTiming: boolean;
  log: LogSettings;
}

/** A setting that cannot be used: its message is one line naming the variable. */
export class ConfigError extends StartupError {}

export type RenderEngine = 'common' | 'app';
/** The first is the default (RENDER_ENGINE unset); `ng add --engine app` puts `app` first. */
export const RENDER_ENGINES: RenderEngine[] = ['common', 'app'];

const LOG_LEVELS = ['info', 'fatal', 'error', 'warn', 'debug', 'trace', 'silent'];
const MIB = 1024 * 1024;
/** Below any worker's size once it listens (~90 MiB for this app): such a limit would recycle at once. */
const MIN_RSS_MB = 64;
/** Short tokens can be guessed; 32 characters is what `openssl rand -hex 16` prints. */
const MIN_TOKEN_LENGTH = 32;

/** How a variable is read: its value when unset (or blank), and what a set value becomes. */
interface Variable<T> {
  unset: T;
  /** Throws a message that follows the variable's name (`must be …, got "…"`). */
  read(value: string): T;
}

/** Every variable the origin reads, named once. Documented in docs/configuration.md. */
const VARIABLES = {
  PORT: integer(4000, 0, 65535),
  HOST: optional(listenHost),
  TLS_CERT: optional(pemFile('CERTIFICATE')),
  TLS_KEY: optional(pemFile('PRIVATE KEY')),
  NG_ALLOWED_HOSTS: { unset: DEFAULT_ALLOWED_HOSTS, read: allowedHosts },
  TRUST_PROXY: boolean(false),
  RENDER_TIMEOUT_MS: integer(5000, 1, 600_000),
  RENDER_INPUTS_STRICT: boolean(false),
  // 8: renders wait on timers between steps; more slots raised the p99 (docs/configuration.md).
  MAX_CONCURRENT_RENDERS: integer(8, 1, 10_000),
  RENDER_QUEUE_LIMIT: integer(256, 0, 1_000_000),
  // 3 s: the shipped Varnish probe marks a backend sick within ~1 s of /readyz turning 503
  // (deploy/varnish/default.vcl), and its previous 1 s probe within ~2 s.
  DRAIN_WINDOW_MS: integer(3000, 0, 600_000),
  SHUTDOWN_GRACE_MS: integer(10_000, 0, 600_000),
  WORKERS: { unset: 1, read: workers },
  // Off unless set: a recycle costs a process start, and only a leaking app gains from it.
  MAX_REQUESTS: integer(0, 0, 2 ** 40),
  MAX_REQUESTS_JITTER: optional((value) => integer(0, 0, 2 ** 40).read(value)),
  // Off unless set, never derived from the container's limit: such a default would sit below a
  // worker's working size under render load (docs/scaling-and-deploying.md#recycling-workers).
  MAX_RSS_MB: { unset: 0, read: rssLimit },
  ACCESS_LOG: boolean(false),
  FAST_PATH: boolean(true),
  EARLY_HINTS: choice(EARLY_HINTS_MODES),
  STATIC_MEMORY_BYTES: integer(64 * MIB, 0, 2 ** 40),
  RENDER_CACHE_BYTES: integer(64 * MIB, 0, 2 ** 40),
  DATA_CACHE_BYTES: integer(32 * MIB, 0, 2 ** 40),
  // 16 MiB: some 16,000 visitors' greeting and cart count at about 1 KB each.
  PART_CACHE_BYTES: integer(16 * MIB, 0, 2 ** 40),
  // 1 MiB: Angular's own bound on a server fetch's body (provideServerRendering's maxResponseBodySize).
  DATA_CACHE_MAX_ENTRY_BYTES: integer(MIB, 1, 512 * MIB),
  DATA_CACHE_HOSTS: optional(dataCacheHosts),
  RENDER_CACHE_ADMISSION: choice(ADMISSIONS),
  CRITICAL_CSS: choice(CRITICAL_CSS_MODES),
  RENDER_ENGINE: choice(RENDER_ENGINES),
  CSP: choice(CSP_MODES),
  CSP_DIRECTIVES: optional(cspDirectives),
  CSP_REPORT_TO: optional(reportTo),
  REDIS_URL: optional(redisUrl),
  // 50 ms: a healthy Redis on the same network answers in well under 1 ms; past this, rendering is the better bet.
  REDIS_TIMEOUT_MS: integer(50, 1, 10_000),
  REDIS_KEY_PREFIX: { unset: 'origin', read: keyPrefix },
  SHARED_CACHE_MAX_ENTRY_BYTES: integer(MIB, 1, 512 * MIB),
  ASSET_ARCHIVE: optional(assetArchive),
  // A week: an open tab, or a page a CDN holds, outlives a deploy by hours, rarely by days.
  ASSET_ARCHIVE_MAX_AGE_S: integer(7 * 24 * 3600, 1, 366 * 24 * 3600),
  ASSET_ARCHIVE_MAX_BYTES: integer(256 * MIB, 1, 2 ** 40),
  REVALIDATE_TOKEN: optional(revalidateToken),
  CACHE_GROUP_ALIASES: { unset: [] as GroupAlias[], read: groupAliases },
  CDN_PURGE_URL: optional(purgeUrl),
  CDN_PURGE_METHOD: { unset: 'POST', read: purgeMethod },
  CDN_PURGE_TOKEN: optional(printable),
  CDN_PURGE_TOKEN_HEADER: optional(headerName),
  LOCALE_COOKIE: optional(cookieName),
  LOCALES: optional(localeList),
  METRICS_PORT: optional((value) => integer(0, 0, 65535).read(value)),
  METRICS_HOST: optional(listenHost),
  LOG_LEVEL: choice(LOG_LEVELS),
  SERVER_TIMING: boolean(false),
  TRACEPARENT: choice(PARENT_TRUSTS),
  // The OpenTelemetry variables the origin reads (the specification's names and defaults).
  OTEL_SDK_DISABLED: boolean(false),
  OTEL_TRACES_EXPORTER: choice(['otlp', 'none'] as const),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(otlpEndpoint),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(otlpEndpoint),
  OTEL_EXPORTER_OTLP_PROTOCOL: { unset: PROTOCOLS[0], read: otlpProtocol },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional(otlpProtocol),
  OTEL_EXPORTER_OTLP_HEADERS: optional(keyValueList),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optional(keyValueList),
  OTEL_EXPORTER_OTLP_TIMEOUT: integer(10_000, 1, 600_000),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: optional((value) => integer(0, 1, 600_000).read(value)),
  OTEL_EXPORTER_OTLP_COMPRESSION: choice(['none', 'gzip'] as const),
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: optional((value) =>
    choice(['none', 'gzip'] as const).read(value),
  ),
  OTEL_SERVICE_NAME: optional(serviceName),
  OTEL_RESOURCE_ATTRIBUTES: optional(keyValueList),
  OTEL_TRACES_SAMPLER: choice(SAMPLERS),
  OTEL_TRACES_SAMPLER_ARG: optional(ratio),
  OTEL_BSP_SCHEDULE_DELAY: integer(5000, 0, 600_000),
  OTEL_BSP_EXPORT_TIMEOUT: integer(30_000, 1, 600_000),
  OTEL_BSP_MAX_QUEUE_SIZE: integer(2048, 1, 1_000_000),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: integer(512, 1, 1_000_000),
  // Trace context only: baggage carries whatever a visitor sends on to the APIs renders call.
  OTEL_PROPAGATORS: { unset: ['tracecontext' as const], read: propagatorList },
} satisfies Record<string, Variable<unknown>>;

type Values = { [Name in keyof typeof VARIABLES]: (typeof VARIABLES)[Name]['unset'] };

export function readConfig(env: NodeJS.ProcessEnv): OriginConfig {
  const v = readVariables(env);
  checkCombinations(v, env);
  return {
    listen: {
      port: v.PORT,
      host: v.HOST,
      tls: v.TLS_CERT && v.TLS_KEY && { cert: v.TLS_CERT, key: v.TLS_KEY },
    },
    hosts: { allowedHosts: v.NG_ALLOWED_HOSTS, trustProxy: v.TRUST_PROXY },
    engine: { name: v.RENDER_ENGINE, criticalCss: v.CRITICAL_CSS },
    limits: { maxRunning: v.MAX_CONCURRENT_RENDERS, maxQueued: v.RENDER_QUEUE_LIMIT },
    pages: pageSettings(v),
    processes: processSettings(v),
    files: { fastPath: v.FAST_PATH, maxTotalBytes: v.STATIC_MEMORY_BYTES },
    earlyHints: v.EARLY_HINTS,
    ...cacheSettings(v),
    sharedCache:
      v.REDIS_URL === undefined
        ? undefined
        : {
            link: { url: v.REDIS_URL, timeoutMs: v.REDIS_TIMEOUT_MS },
            tier: { keyPrefix: v.REDIS_KEY_PREFIX, maxEntryBytes: v.SHARED_CACHE_MAX_ENTRY_BYTES },
          },
    csp:
      v.CSP === 'off'
        ? undefined
        : {
            mode: v.CSP,
            directives: v.CSP_DIRECTIVES ?? new Map<string, string[]>(),
            reportTo: v.CSP_REPORT_TO,
          },
    assetArchive: v.ASSET_ARCHIVE && {
      store: v.ASSET_ARCHIVE,
      bounds: { maxAgeMs: v.ASSET_ARCHIVE_MAX_AGE_S * 1000, maxBytes: v.ASSET_ARCHIVE_MAX_BYTES },
    },
    revalidation: {
      token: v.REVALIDATE_TOKEN,
      cdnPurge:
        v.CDN_PURGE_URL === undefined
          ? undefined
          : {
              url: v.CDN_PURGE_URL,
              method: v.CDN_PURGE_METHOD,
              token: v.CDN_PURGE_TOKEN,
              tokenHeader: v.CDN_PURGE_TOKEN_HEADER,
            },
    },
    localeCookie: v.LOCALE_COOKIE,
    locales: v.LOCALES,
    metrics:
      v.METRICS_PORT === undefined ? undefined : { port: v.METRICS_PORT, host: v.METRICS_HOST },
    ...observeSettings(v, env),
    log: { level: v.LOG_LEVEL, access: v.ACCESS_LOG },
  };
}

/** Every variable of the table, read; an unset or blank one is its `unset` value. */
function readVariables(env: NodeJS.ProcessEnv): Values {
  const values: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const value = env[name];
    try {
      values[name] =
        value === undefined || value.trim() === '' ? variable.unset : variable.read(value);
    } catch (error) {
      throw new ConfigError(`${name} ${(error as Error).message}`);
    }
  }
  return values as Values;
}

/** Settings that are each valid but not together. */
function checkCombinations(v: Values, env: NodeJS.ProcessEnv): void {
  // Angular's engine always inlines the build's plans: it has no per-request pass and no way off.
  if (v.RENDER_ENGINE === 'app' && v.CRITICAL_CSS !== 'compiled') {
    fail(
      `CRITICAL_CSS must be compiled with RENDER_ENGINE=app (Angular's engine inlines the build's plans), got "${v.CRITICAL_CSS}"`,
    );
  }
  for (const name of ['CSP_DIRECTIVES', 'CSP_REPORT_TO'] as const) {
    if (v[name] !== undefined && v.CSP === 'off') {
      fail(`${name} needs CSP=strict or CSP=report-only`);
    }
  }
  if (v.CDN_PURGE_URL === undefined) {
    for (const name of ['CDN_PURGE_METHOD', 'CDN_PURGE_TOKEN', 'CDN_PURGE_TOKEN_HEADER']) {
      if (env[name] !== undefined && env[name] !== '') {
        fail(`${name} needs CDN_PURGE_URL`);
      }
    }
  }
  if (v.CDN_PURGE_TOKEN_HEADER !== undefined && v.CDN_PURGE_TOKEN === undefined) {
    fail('CDN_PURGE_TOKEN_HEADER needs CDN_PURGE_TOKEN');
  }
  if (v.METRICS_PORT !== undefined && v.METRICS_PORT !== 0 && v.METRICS_PORT === v.PORT) {
    fail(`METRICS_PORT must differ from PORT (the public port), got "${env['METRICS_PORT']}"`);
  }
  if (v.METRICS_HOST !== undefined && v.METRICS_PORT === undefined) {
    fail('METRICS_HOST needs METRICS_PORT');
  }
  if (v.ASSET_ARCHIVE === 'redis' && v.REDIS_URL === undefined) {
    fail('ASSET_ARCHIVE=redis needs REDIS_URL');
  }
  for (const name of ['ASSET_ARCHIVE_MAX_AGE_S', 'ASSET_ARCHIVE_MAX_BYTES']) {
    if (v.ASSET_ARCHIVE === undefined && env[name] !== undefined && env[name] !== '') {
      fail(`${name} needs ASSET_ARCHIVE`);
    }
  }
  if (v.MAX_REQUESTS_JITTER !== undefined && v.MAX_REQUESTS === 0) {
    fail('MAX_REQUESTS_JITTER needs MAX_REQUESTS');
  }
  if ((v.TLS_CERT === undefined) !== (v.TLS_KEY === undefined)) {
    fail(`${v.TLS_CERT === undefined ? 'TLS_KEY needs TLS_CERT' : 'TLS_CERT needs TLS_KEY'}`);
  }
}

/**
 * WORKERS, DRAIN_WINDOW_MS, SHUTDOWN_GRACE_MS, and the recycle limits: undefined when neither
 * MAX_REQUESTS nor MAX_RSS_MB is set. The jitter defaults to a tenth of MAX_REQUESTS so that
 * workers started together do not reach their limits together.
 */
function processSettings(v: Values): ProcessSettings {
  const limited = v.MAX_REQUESTS !== 0 || v.MAX_RSS_MB !== 0;
  return {
    workers: v.WORKERS,
    drainWindowMs: v.DRAIN_WINDOW_MS,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
    recycle: limited
      ? {
          maxRequests: v.MAX_REQUESTS === 0 ? undefined : v.MAX_REQUESTS,
          maxRequestsJitter: v.MAX_REQUESTS_JITTER ?? Math.floor(v.MAX_REQUESTS / 10),
          maxRssBytes: v.MAX_RSS_MB === 0 ? undefined : v.MAX_RSS_MB * MIB,
        }
      : undefined,
  };
}

function fail(message: string): never {
  throw new ConfigError(message);
}

function optional<T>(read: (value: string) => T): Variable<T | undefined> {
  return { unset: undefined, read };
}

function integer(unset: number, min: number, max: number): Variable<number> {
  return {
    unset,
    read(value) {
      const number = Number(value);
      if (!/^\d+$/.test(value) || number < min || number > max) {
        throw new Error(`must be a whole number from ${min} to ${max}, got "${value}"`);
      }
      return number;
    },
  };
}

/** Traces (OTEL_*, TRACEPARENT) and Server-Timing. */
function observeSettings(
  v: Values,
  env: NodeJS.ProcessEnv,
): Pick<OriginConfig, 'tracing' | 'serverTiming'> {
  const tracing = tracingSettings(v, env);
  if (tracing !== undefined && 'error' in tracing) {
    fail(tracing.error);
  }
  return { tracing, serverTiming: v.SERVER_TIMING };
}

/** The caches of this process: pages, what renders fetch, visitors' parts. */
function cacheSettings(
  v: Values,
): Pick<OriginConfig, 'renderCache' | 'dataCache' | 'partCacheBytes'> {
  return {
    renderCache:
      v.RENDER_CACHE_BYTES === 0
        ? undefined
        : { maxBytes: v.RENDER_CACHE_BYTES, admission: v.RENDER_CACHE_ADMISSION },
    dataCache: dataCacheSettings(v),
    partCacheBytes: v.PART_CACHE_BYTES,
  };
}

/** What renders fetch (data-cache/). */
function dataCacheSettings(v: Values): DataCacheSettings {
  return {
    maxBytes: v.DATA_CACHE_BYTES,
    maxEntryBytes: v.DATA_CACHE_MAX_ENTRY_BYTES,
    hosts: v.DATA_CACHE_HOSTS,
  };
}

/** The pages' own settings (pages/pages.ts). */
function pageSettings(v: Values): PageSettings {
  return {
    renderTimeoutMs: v.RENDER_TIMEOUT_MS,
    cacheGroupAliases: v.CACHE_GROUP_ALIASES,
    strictInputs: v.RENDER_INPUTS_STRICT,
  };
}

function boolean(unset: boolean): Variable<boolean> {
  return {
    unset,
    read(value) {
      if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) {
        return true;
      }
      if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) {
        return false;
      }
      throw new Error(`must be true or false, got "${value}"`);
    },
  };
}

/** One of `choices`; the first is the default. */
function choice<T extends string>(choices: readonly T[]): Variable<T> {
  return {
    unset: choices[0],
    read(value) {
      if (!choices.includes(value as T)) {
        throw new Error(`must be one of ${choices.join(', ')}, got "${value}"`);
      }
      return value as T;
    },
  };
}

/** `auto`: the CPUs this process may use (cgroup limits included), else a count. */
function workers(value: string): number {
  if (value === 'auto') {
    return availableParallelism();
  }
  if (!/^\d+$/.test(value)) {
    throw new Error(`must be auto or a whole number from 1 to 1024, got "${value}"`);
  }
  return integer(1, 1, 1024).read(value);
}

/** MiB (as Kubernetes' `Mi`); `0` is off. */
function rssLimit(value: string): number {
  const mib = Number(value);
  if (!/^\d+$/.test(value) || (mib !== 0 && mib < MIN_RSS_MB) || mib > 2 ** 20) {
    throw new Error(
      `must be 0 (off) or a whole number of MiB from ${MIN_RSS_MB} to ${2 ** 20}, got "${value}"`,
    );
  }
  return mib;
}

function listenHost(value: string): string {
  if (isIP(value) === 0 && !HOSTNAME.test(value.toLowerCase())) {
    throw new Error(`must be an IP address or a host name to listen on, got "${value}"`);
  }
  return value;
}

/**
 * Same format as Angular's own NG_ALLOWED_HOSTS: a comma-separated list of host names, where
 * `*.example.com` allows every subdomain of example.com and `*` allows any host.
 */
function allowedHosts(value: string): string[] {
  const hosts = value.split(',').map((entry) => entry.trim().toLowerCase());
  const bad = hosts.find((host) => !isAllowedHostPattern(host));
  if (bad !== undefined) {
    throw new Error(
      `must be a comma-separated list of host names such as "example.com,*.example.com", got "${bad}" in "${value}"`,
    );
  }
  return hosts;
}

/**
 * A PEM file of this `label` (`CERTIFICATE`, or a private key of any kind), read once at startup:
 * its bytes. The message names the path, never the file's content.
 */
function pemFile(label: string): (path: string) => Buffer {
  return (path) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path.trim());
    } catch (error) {
      throw new Error(
        `cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'} "${path}"`,
        {
          cause: error,
        },
      );
    }
    if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(bytes.toString('latin1'))) {
      throw new Error(`must be a PEM file with a ${label} block, got "${path}"`);
    }
    return bytes;
  };
}

/** `off`, `redis` (the shared tier's Redis) or the absolute path of a folder (a volume). */
function assetArchive(value: string): 'redis' | { dir: string } | undefined {
  const trimmed = value.trim();
  if (trimmed === 'off') {
    return undefined;
  }
  if (trimmed === 'redis') {
    return 'redis';
  }
  if (!isAbsolute(trimmed)) {
    throw new Error(`must be off, redis or the absolute path of a folder, got "${value}"`);
  }
  return { dir: trimmed };
}

function cspDirectives(value: string): CspDirectives {
  try {
    return parseCspDirectives(value);
  } catch (error) {
    throw new Error(
      `must be directives such as "img-src 'self' https://img.example; report-uri /csp": ` +
        `${(error as Error).message}, got "${value}"`,
      { cause: error },
    );
  }
}

function reportTo(value: string): string {
  try {
    return parseReportTo(value.trim());
  } catch (error) {
    throw new Error(`${(error as Error).message}, got "${value}"`, { cause: error });
  }
}

function redisUrl(value: string): string {
  const url = value.trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('must be a URL such as redis://user:password@host:6379/0');
  }
  if ((parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || parsed.hostname === '') {
    // Never echo the value: it may hold a password.
    throw new Error(
      `must start with redis:// or rediss:// (TLS) and name a host, got a "${parsed.protocol}" URL`,
    );
  }
  return url;
}

/** DATA_CACHE_HOSTS: hosts (`api.example.com`, `api.example.com:8443`) whose responses are kept. */
function dataCacheHosts(value: string): ReadonlySet<string> {
  const hosts = value.split(',').map((host) => host.trim().toLowerCase());
  const bad = hosts.find((host) => !/^[a-z0-9.-]{1,253}(:\d{1,5})?$/.test(host));
  if (bad !== undefined) {
    throw new Error(`must be host names or host:port, comma-separated, got "${bad}"`);
  }
  return new Set(hosts);
}

function keyPrefix(value: string): string {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(value)) {
    throw new Error(`must be 1 to 64 letters, digits, "_", "." or "-", got "${value}"`);
  }
  return value;
}

function revalidateToken(value: string): string {
  printable(value);
  if (value.length < MIN_TOKEN_LENGTH) {
    // The value is a secret: its length is all the message repeats.
    throw new Error(
      `must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32), got ${value.length}`,
    );
  }
  return value;
}

/** A secret: printable ASCII without spaces; never echoed. */
function printable(value: string): string {
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new Error('must be printable ASCII without spaces');
  }
  return value;
}

function groupAliases(value: string): GroupAlias[] {
  const aliases = value.split(',').map((alias) => alias.trim().toLowerCase());
  if (!aliases.every((alias) => GROUP_ALIASES.includes(alias as GroupAlias))) {
    throw new Error(
      `must be a comma-separated list of ${GROUP_ALIASES.join(', ')}, got "${value}"`,
    );
  }
  return [...new Set(aliases as GroupAlias[])];
}

function purgeUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url.replaceAll(/\{(groups|group|path|mode)\}/g, 'x'));
  } catch {
    parsed = undefined;
  }
  if (
    parsed === undefined ||
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    purgeTarget(url) === undefined
  ) {
    throw new Error(
      `must be an http(s) URL with one of {groups}, {group} or {path} (and optionally {mode}), ` +
        `such as "https://api.fastly.com/service/ID/purge/{group}", got "${url}"`,
    );
  }
  return url;
}

function purgeMethod(value: string): string {
  if (!/^[A-Z]{1,16}$/.test(value)) {
    throw new Error(`must be an HTTP method in capitals such as POST or PURGE, got "${value}"`);
  }
  return value;
}

function cookieName(value: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(value)) {
    throw new Error(`must be a cookie name such as locale, got "${value}"`);
  }
  return value;
}

/** `fr` or `fr,de`: locale names as a build's manifest spells them, each once (checked against the build at startup). */
function localeList(value: string): string[] {
  const locales = value.split(',').map((locale) => locale.trim());
  if (locales.some((locale) => !/^[A-Za-z0-9][A-Za-z0-9_-]{0,34}$/.test(locale))) {
    throw new Error(
      `must be a comma-separated list of the build's locales such as fr,de, got "${value}"`,
    );
  }
  if (new Set(locales).size !== locales.length) {
    throw new Error(`names a locale twice: "${value}"`);
  }
  return locales;
}

/** OTEL_SERVICE_NAME: what the traces' backend lists the service as. */
function serviceName(value: string): string {
  if (!/^[\x20-\x7e]{1,255}$/.test(value)) {
    throw new Error(`must be printable ASCII, at most 255 characters, got "${value}"`);
  }
  return value;
}

function headerName(value: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(value)) {
    throw new Error(`must be a header name such as Fastly-Key, got "${value}"`);
  }
  return value;
}
