import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import {
  CSP_MODES,
  type CspDirectives,
  type CspMode,
  parseCspDirectives,
  parseReportTo,
} from './csp/policy.ts';
import { type Admission, ADMISSIONS } from './render-cache/admission.ts';
import { GROUP_ALIASES, type GroupAlias } from './render-cache/cache-groups.ts';
import { type CdnPurgeConfig, purgeTarget } from './revalidation/cdn-purge.ts';
import { DEFAULT_ALLOWED_HOSTS, HOSTNAME, isAllowedHostPattern } from './request-origin.ts';

/** The origin's settings, read once at startup from the environment. */
export interface OriginConfig {
  port: number;
  /** Interface to bind; undefined binds every interface, like Node's default. */
  host: string | undefined;
  /** Host names a request may name in its Host header (`*.example.com` and `*` allowed). */
  allowedHosts: string[];
  /** Trust X-Forwarded-Proto/Host from a proxy in front (they are still checked against allowedHosts). */
  trustProxy: boolean;
  /** A render slower than this answers with the client-side shell instead. */
  renderTimeoutMs: number;
  /** Renders running at once; more wait in the queue. */
  maxConcurrentRenders: number;
  /** Renders waiting for a slot; more are shed with 503. */
  renderQueueLimit: number;
  /** After SIGTERM/SIGINT, how long in-flight requests may take before connections are cut. */
  shutdownGraceMs: number;
  /** Origin processes: 1 serves in this process; more run under a supervising primary (cluster.ts). */
  workers: number;
  /** One log line per request when true (off by default: it costs throughput). */
  accessLog: boolean;
  /** Answer files held in memory before Koa (fast-path.ts); off sends every request through Koa. */
  fastPath: boolean;
  /** Bytes of the browser build held in memory; 0 serves every file from disk through koa-static. */
  staticMemoryBytes: number;
  /** Bytes of rendered pages the render cache holds (routes that declare a policy); 0 turns it off. */
  renderCacheBytes: number;
  /** Which new pages a full render cache stores: `second` (asked for again) or `first` (all). */
  renderCacheAdmission: Admission;
  /**
   * How rendered pages get their critical CSS: `compiled` (stylesheets compiled at startup),
   * `per-request` (CommonEngine's full Beasties pass) or `off`.
   */
  criticalCss: CriticalCssMode;
  /**
   * What renders pages: `common` (CommonEngine, the default) or `app` (AngularNodeAppEngine). Both
   * run from the same build; see docs/choosing-an-engine.md.
   */
  renderEngine: RenderEngine;
  /** A Content-Security-Policy with a fresh nonce on every HTML answer (csp/): off, strict or report-only. */
  csp: CspMode;
  /** Directives added to the strict policy (CSP_DIRECTIVES). */
  cspDirectives: CspDirectives;
  /** Where browsers send CSP reports through the Reporting API (CSP_REPORT_TO); undefined for none. */
  cspReportTo: string | undefined;
  /** The render cache's shared tier (render-cache/shared-tier.ts); undefined: each process alone. */
  sharedCache: SharedCacheConfig | undefined;
  /** The bearer token of POST /_origin/revalidate (REVALIDATE_TOKEN); undefined: no endpoint. */
  revalidateToken: string | undefined;
  /** CDN spellings of a page's Cache-Groups also sent: Surrogate-Key, Cache-Tag (CACHE_GROUP_ALIASES). */
  cacheGroupAliases: GroupAlias[];
  /** The CDN purge hook (CDN_PURGE_*): undefined when CDN_PURGE_URL is unset. */
  cdnPurge: CdnPurgeConfig | undefined;
  /** Port of the Prometheus endpoint (metrics/); undefined: no metrics at all. */
  metricsPort: number | undefined;
  /** Interface the metrics endpoint binds; undefined binds every interface, like HOST. */
  metricsHost: string | undefined;
  logLevel: string;
}

/** Where the shared tier lives and how long a request may wait on it. */
export interface SharedCacheConfig {
  /** `redis://` or `rediss://` (TLS), user and password in the URL (REDIS_URL). */
  url: string;
  /** The longest a request waits on one Redis command before going on without it. */
  timeoutMs: number;
  /** Every key starts with this (REDIS_KEY_PREFIX): several origins can share one Redis. */
  keyPrefix: string;
  /** Pages larger than this stay in their process's cache only. */
  maxEntryBytes: number;
}

/** A setting that cannot be used: its message is one line naming the variable. */
export class ConfigError extends Error {}

export const DEFAULT_PORT = 4000;
export type CriticalCssMode = 'compiled' | 'per-request' | 'off';
const CRITICAL_CSS_MODES: CriticalCssMode[] = ['compiled', 'per-request', 'off'];
export type RenderEngine = 'common' | 'app';
/** The first is the default (RENDER_ENGINE unset); `ng add --engine app` puts `app` first. */
export const RENDER_ENGINES: RenderEngine[] = ['common', 'app'];

export function readConfig(env: NodeJS.ProcessEnv): OriginConfig {
  const renderEngine = readChoice('RENDER_ENGINE', env['RENDER_ENGINE'], RENDER_ENGINES);
  const criticalCss = readChoice('CRITICAL_CSS', env['CRITICAL_CSS'], CRITICAL_CSS_MODES);
  // Angular's engine always inlines the build's plans: it has no per-request pass and no way off.
  if (renderEngine === 'app' && criticalCss !== 'compiled') {
    throw new ConfigError(
      `CRITICAL_CSS must be compiled with RENDER_ENGINE=app (Angular's engine inlines the build's plans), got "${criticalCss}"`,
    );
  }
  const port = readInteger('PORT', env['PORT'], DEFAULT_PORT, 0, 65535);
  return {
    port,
    host: readHost(env['HOST']),
    allowedHosts: readAllowedHosts(env['NG_ALLOWED_HOSTS']),
    trustProxy: readBoolean('TRUST_PROXY', env['TRUST_PROXY'], false),
    renderTimeoutMs: readInteger('RENDER_TIMEOUT_MS', env['RENDER_TIMEOUT_MS'], 5000, 1, 600_000),
    // 8: renders wait on timers between steps (1 slot: 2/3 the throughput of 8); 16–50 gave 5–10% more, at 1.3–5× the p99 (bench).
    maxConcurrentRenders: readInteger(
      'MAX_CONCURRENT_RENDERS',
      env['MAX_CONCURRENT_RENDERS'],
      8,
      1,
      10_000,
    ),
    renderQueueLimit: readInteger(
      'RENDER_QUEUE_LIMIT',
      env['RENDER_QUEUE_LIMIT'],
      256,
      0,
      1_000_000,
    ),
    shutdownGraceMs: readInteger('SHUTDOWN_GRACE_MS', env['SHUTDOWN_GRACE_MS'], 10_000, 0, 600_000),
    workers: readWorkers(env['WORKERS']),
    accessLog: readBoolean('ACCESS_LOG', env['ACCESS_LOG'], false),
    fastPath: readBoolean('FAST_PATH', env['FAST_PATH'], true),
    staticMemoryBytes: readInteger(
      'STATIC_MEMORY_BYTES',
      env['STATIC_MEMORY_BYTES'],
      64 * 1024 * 1024,
      0,
      2 ** 40,
    ),
    renderCacheBytes: readInteger(
      'RENDER_CACHE_BYTES',
      env['RENDER_CACHE_BYTES'],
      64 * 1024 * 1024,
      0,
      2 ** 40,
    ),
    renderCacheAdmission: readChoice(
      'RENDER_CACHE_ADMISSION',
      env['RENDER_CACHE_ADMISSION'],
      ADMISSIONS,
    ),
    criticalCss,
    renderEngine,
    csp: readChoice('CSP', env['CSP'], CSP_MODES),
    cspDirectives: readCspDirectives(env['CSP_DIRECTIVES'], env['CSP']),
    cspReportTo: readCspReportTo(env['CSP_REPORT_TO'], env['CSP']),
    sharedCache: readSharedCache(env),
    revalidateToken: readRevalidateToken(env['REVALIDATE_TOKEN']),
    cacheGroupAliases: readGroupAliases(env['CACHE_GROUP_ALIASES']),
    cdnPurge: readCdnPurge(env),
    ...readMetricsAddress(env, port),
    logLevel: readChoice('LOG_LEVEL', env['LOG_LEVEL'], LOG_LEVELS),
  };
}

function readSharedCache(env: NodeJS.ProcessEnv): SharedCacheConfig | undefined {
  const url = env['REDIS_URL']?.trim();
  if (url === undefined || url === '') {
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL must be a URL such as redis://user:password@host:6379/0');
  }
  if ((parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || parsed.hostname === '') {
    // Never echo the value: it may hold a password.
    throw new ConfigError(
      `REDIS_URL must start with redis:// or rediss:// (TLS) and name a host, got a "${parsed.protocol}" URL`,
    );
  }
  const keyPrefix = env['REDIS_KEY_PREFIX'] ?? 'origin';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(keyPrefix)) {
    throw new ConfigError(
      `REDIS_KEY_PREFIX must be 1 to 64 letters, digits, "_", "." or "-", got "${keyPrefix}"`,
    );
  }
  return {
    url,
    // 50 ms: a healthy Redis on the same network answers in well under 1 ms; past this, rendering is the better bet.
    timeoutMs: readInteger('REDIS_TIMEOUT_MS', env['REDIS_TIMEOUT_MS'], 50, 1, 10_000),
    keyPrefix,
    maxEntryBytes: readInteger(
      'SHARED_CACHE_MAX_ENTRY_BYTES',
      env['SHARED_CACHE_MAX_ENTRY_BYTES'],
      1024 * 1024,
      1,
      512 * 1024 * 1024,
    ),
  };
}

function readCspDirectives(value: string | undefined, mode: string | undefined): CspDirectives {
  if (value === undefined || value.trim() === '') {
    return new Map();
  }
  if (mode !== 'strict' && mode !== 'report-only') {
    throw new ConfigError('CSP_DIRECTIVES needs CSP=strict or CSP=report-only');
  }
  try {
    return parseCspDirectives(value);
  } catch (error) {
    throw new ConfigError(
      `CSP_DIRECTIVES must be directives such as "img-src 'self' https://img.example; report-uri /csp": ` +
        `${(error as Error).message}, got "${value}"`,
    );
  }
}

function readCspReportTo(value: string | undefined, mode: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') {
    return undefined;
  }
  if (mode !== 'strict' && mode !== 'report-only') {
    throw new ConfigError('CSP_REPORT_TO needs CSP=strict or CSP=report-only');
  }
  try {
    return parseReportTo(value.trim());
  } catch (error) {
    throw new ConfigError(`CSP_REPORT_TO ${(error as Error).message}, got "${value}"`);
  }
}

/** Short tokens can be guessed; 32 characters is what `openssl rand -hex 16` prints. */
const MIN_TOKEN_LENGTH = 32;

function readRevalidateToken(value: string | undefined): string | undefined {
  if (value === undefined || value === '') {
    return undefined;
  }
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new ConfigError('REVALIDATE_TOKEN must be printable ASCII without spaces');
  }
  if (value.length < MIN_TOKEN_LENGTH) {
    // The value is a secret: its length is all the message repeats.
    throw new ConfigError(
      `REVALIDATE_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32), got ${value.length}`,
    );
  }
  return value;
}

function readGroupAliases(value: string | undefined): GroupAlias[] {
  if (value === undefined || value.trim() === '') {
    return [];
  }
  const aliases = value.split(',').map((alias) => alias.trim().toLowerCase());
  for (const alias of aliases) {
    if (!GROUP_ALIASES.includes(alias as GroupAlias)) {
      throw new ConfigError(
        `CACHE_GROUP_ALIASES must be a comma-separated list of ${GROUP_ALIASES.join(', ')}, got "${value}"`,
      );
    }
  }
  return [...new Set(aliases as GroupAlias[])];
}

function readCdnPurge(env: NodeJS.ProcessEnv): CdnPurgeConfig | undefined {
  const url = env['CDN_PURGE_URL'];
  if (url === undefined || url === '') {
    for (const name of ['CDN_PURGE_METHOD', 'CDN_PURGE_TOKEN', 'CDN_PURGE_TOKEN_HEADER']) {
      if (env[name] !== undefined && env[name] !== '') {
        throw new ConfigError(`${name} needs CDN_PURGE_URL`);
      }
    }
    return undefined;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url.replaceAll(/\{(group|path|mode)\}/g, 'x'));
  } catch {
    parsed = undefined;
  }
  if (
    parsed === undefined ||
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    purgeTarget(url) === undefined
  ) {
    throw new ConfigError(
      `CDN_PURGE_URL must be an http(s) URL with either {group} or {path} (and optionally {mode}), ` +
        `such as "https://api.fastly.com/service/ID/purge/{group}", got "${url}"`,
    );
  }
  const method = nonEmpty(env['CDN_PURGE_METHOD']) ?? 'POST';
  if (!/^[A-Z]{1,16}$/.test(method)) {
    throw new ConfigError(
      `CDN_PURGE_METHOD must be an HTTP method in capitals such as POST or PURGE, got "${method}"`,
    );
  }
  const token = nonEmpty(env['CDN_PURGE_TOKEN']);
  if (token !== undefined && !/^[\x21-\x7e]+$/.test(token)) {
    throw new ConfigError('CDN_PURGE_TOKEN must be printable ASCII without spaces');
  }
  const tokenHeader = nonEmpty(env['CDN_PURGE_TOKEN_HEADER']);
  if (tokenHeader !== undefined && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(tokenHeader)) {
    throw new ConfigError(
      `CDN_PURGE_TOKEN_HEADER must be a header name such as Fastly-Key, got "${tokenHeader}"`,
    );
  }
  if (tokenHeader !== undefined && token === undefined) {
    throw new ConfigError('CDN_PURGE_TOKEN_HEADER needs CDN_PURGE_TOKEN');
  }
  return { url, method, token, tokenHeader };
}

/** An unset and an empty variable mean the same: the default. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

function readInteger(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') {
    return fallback;
  }
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return number;
}

/** `auto`: the CPUs this process may use (cgroup limits included), else a count. */
function readWorkers(value: string | undefined): number {
  if (value === 'auto') {
    return availableParallelism();
  }
  if (value !== undefined && value !== '' && !/^\d+$/.test(value)) {
    throw new ConfigError(`WORKERS must be auto or a whole number from 1 to 1024, got "${value}"`);
  }
  return readInteger('WORKERS', value, 1, 1, 1024);
}

function readBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') {
    return fallback;
  }
  if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) {
    return true;
  }
  if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) {
    return false;
  }
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

const LOG_LEVELS = ['info', 'fatal', 'error', 'warn', 'debug', 'trace', 'silent'];

/** One of `choices`; the first is the default. */
function readChoice<T extends string>(
  name: string,
  value: string | undefined,
  choices: readonly T[],
): T {
  if (value === undefined || value === '') {
    return choices[0];
  }
  if (!choices.includes(value as T)) {
    throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
  }
  return value as T;
}

function readHost(value: string | undefined, name = 'HOST'): string | undefined {
  if (value === undefined || value === '') {
    return undefined;
  }
  if (isIP(value) === 0 && !HOSTNAME.test(value.toLowerCase())) {
    throw new ConfigError(
      `${name} must be an IP address or a host name to listen on, got "${value}"`,
    );
  }
  return value;
}

/** METRICS_PORT unset: no metrics; set: its own port, never the public one. */
function readMetricsAddress(
  env: NodeJS.ProcessEnv,
  port: number,
): Pick<OriginConfig, 'metricsPort' | 'metricsHost'> {
  const value = env['METRICS_PORT'];
  const metricsPort =
    value === undefined || value === ''
      ? undefined
      : readInteger('METRICS_PORT', value, 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (the public port), got "${value}"`);
  }
  const metricsHost = readHost(env['METRICS_HOST'], 'METRICS_HOST');
  if (metricsHost !== undefined && metricsPort === undefined) {
    throw new ConfigError('METRICS_HOST needs METRICS_PORT');
  }
  return { metricsPort, metricsHost };
}

/**
 * Same format as Angular's own NG_ALLOWED_HOSTS: a comma-separated list of host names, where
 * `*.example.com` allows every subdomain of example.com and `*` allows any host.
 */
function readAllowedHosts(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') {
    return DEFAULT_ALLOWED_HOSTS;
  }
  const hosts = value.split(',').map((entry) => entry.trim().toLowerCase());
  for (const host of hosts) {
    if (!isAllowedHostPattern(host)) {
      throw new ConfigError(
        `NG_ALLOWED_HOSTS must be a comma-separated list of host names such as "example.com,*.example.com", ` +
          `got "${host}" in "${value}"`,
      );
    }
  }
  return hosts;
}
