// The data cache: what renders fetch (Angular's HttpClient goes through fetch on the server), kept
// as a shared HTTP cache keeps it (RFC 9111 by http-cache-semantics, and the origin's stricter
// rules: http-rules.ts), by the cache core (cache/): bounded in this process (DATA_CACHE_BYTES) and
// shared with every replica through Redis (REDIS_URL), one upstream request per URL however many
// renders ask at once, stale-while-revalidate and stale-if-error, revalidated with the API's
// validators (a 304 makes an entry fresh again), revalidation on demand by group.
import CachePolicy from 'http-cache-semantics';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { parseCacheGroups } from '../cache/cache-groups.ts';
import { SharedTier } from '../cache/shared-tier.ts';
import { EntryStore } from '../cache/store.ts';
import {
  outcomeOf as servedOutcome,
  type Produced,
  type Served,
  TieredCache,
} from '../cache/tiered-cache.ts';
import { report } from '../errors.ts';
import {
  channels,
  type DataFetchMessage,
  traced,
  type UpstreamEndedMessage,
  type UpstreamMessage,
} from '../channels.ts';
import { throttledWarning } from '../logger.ts';
import type { RedisLink } from '../redis/link.ts';
import { type CachedData, dataBytes, dataCodec } from './data-entry.ts';
import {
  credentialed,
  dataFreshness,
  entryOf,
  groupsOf,
  headersOf,
  requestOf,
  whyNotStored,
} from './http-rules.ts';

/** How a render's data came: what the page built from it is told (render-fetch.ts). */
export type DataOutcome =
  'hit' | 'stale' | 'shared' | 'miss' | 'revalidated' | 'coalesced' | 'bypass' | 'error';

export const DATA_OUTCOMES: readonly DataOutcome[] = [
  'hit',
  'stale',
  'shared',
  'miss',
  'revalidated',
  'coalesced',
  'bypass',
  'error',
];

/** What one render's fetches leave for the page built from them. */
export interface DataUse {
  /** The groups of the data it used: the page's too (revalidating one reaches both). */
  readonly groups: Set<string>;
  /**
   * The keys of the data it used from the cache (at most MAX_SOURCES): the page keeps them, so that
   * revalidating the page by path reaches its data too (StoredEntry.sources).
   */
  readonly keys: Set<string>;
  /** The least freshness left of the data it used that says how fresh it is; undefined: none said. */
  freshMs: number | undefined;
  /** It used data no shared cache may keep (private, no-store, credentials without public). */
  private: boolean;
  /** A fetch failed (a 5xx, or no answer) and no stored answer stood in: the page may lack data. */
  failed: boolean;
  /** Each fetch: its host, how it came, and how long the render waited for it (bounded). */
  readonly fetches: { host: string; outcome: DataOutcome; ms: number }[];
  /** How long the render had a fetch under way, overlapping ones counted once (Server-Timing's `data`). */
  waitedMs: number;
  /** Fetches under way now, and since when there was one. */
  inFlight: number;
  busySince: number;
  /** The route says its renders' fetches go past the cache (`Data-Cache: off`). */
  readonly bypass: boolean;
}

/**
 * Data keys a page remembers: far more than a page fetches. A page past it is revalidated by path
 * with the data it fetched first; its groups reach all of it.
 */
const MAX_SOURCES = 128;
/** At most this many fetches of one render are listed (for Server-Timing and logs), all are counted. */
const MAX_LISTED_FETCHES = 32;
/** At most this many hosts are counted apart; the rest as `other` (an app may fetch from many). */
const MAX_HOSTS = 64;
/** URLs whose responses said Vary, remembered with the header names (their keys hold the values). */
const VARY_URLS = 10_000;

export interface DataCacheSettings {
  /** Bytes of responses kept in this process (DATA_CACHE_BYTES); 0: nothing is kept. */
  maxBytes: number;
  /** A response larger than this is passed on as it comes, never kept (DATA_CACHE_MAX_ENTRY_BYTES). */
  maxEntryBytes: number;
  /** Hosts whose responses are kept (DATA_CACHE_HOSTS, `host` or `host:port`); undefined: all. */
  hosts: ReadonlySet<string> | undefined;
}

export interface DataCacheOptions extends DataCacheSettings {
  /** Undefined when maxBytes is 0: fetches are only accounted for. */
  store: EntryStore<CachedData> | undefined;
  shared: SharedTier<CachedData> | undefined;
  /** The process's own fetch, unwrapped. */
  fetch: typeof fetch;
  /** How long a background refresh may wait for its upstream, and for another process's. */
  patienceMs: number;
  log: Logger;
}

/**
 * A response the cache passes on as it comes, never kept (over DATA_CACHE_MAX_ENTRY_BYTES): the
 * request that asked first takes it; any other waiting for the same production asks for itself.
 */
class PassedOn extends Error {
  /** TieredCache: a stale entry must not answer in place of it. */
  readonly noStaleOnError = true;
  #response: Response | undefined;
  readonly headers: Headers;

  constructor(response: Response) {
    super('passed on');
    this.#response = response;
    this.headers = response.headers;
  }

  /** The response, to the first who asks; undefined after. */
  take(): Response | undefined {
    const response = this.#response;
    this.#response = undefined;
    return response;
  }
}

/** An upstream 5xx: never stored; each request that waited for it gets it (stale-if-error aside). */
class UpstreamError extends Error {
  readonly status: number;
  readonly #status: { status: number; statusText: string; headers: Headers };
  readonly #body: Buffer;

  constructor(response: Response, body: Buffer) {
    super(`upstream answered ${response.status}`);
    this.status = response.status;
    this.#status = response;
    this.#body = body;
  }

  get headers(): Headers {
    return this.#status.headers;
  }

  response(): Response {
    const { status, statusText, headers } = this.#status;
    return new Response(nullBodyStatus(status) ? null : new Uint8Array(this.#body), {
      status,
      statusText,
      headers,
    });
  }
}

/** A response for a render, and what it tells of the page (its entry when one was made). */
interface Answered {
  response: Response;
  headers: Headers | Record<string, string>;
  entry?: CachedData;
  /** The cache key it was answered under, when the cache answered it. */
  key?: string;
  outcome: DataOutcome;
}

export class DataCache {
  readonly #tiered: TieredCache<CachedData> | undefined;
  readonly #store: EntryStore<CachedData> | undefined;
  readonly #fetch: typeof fetch;
  readonly #maxEntryBytes: number;
  readonly #hosts: ReadonlySet<string> | undefined;
  readonly #patienceMs: number;
  readonly #log: Logger;
  readonly #varyOf = new LRUCache<string, string[]>({ max: VARY_URLS });
  readonly #warnUpstream: () => void;
  /** By host, then outcome: every fetch of a render. */
  readonly counts = new Map<string, Record<DataOutcome, number>>();

  constructor(options: DataCacheOptions) {
    this.#store = options.store;
    this.#fetch = options.fetch;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.#hosts = options.hosts;
    this.#patienceMs = options.patienceMs;
    this.#log = options.log;
    this.#warnUpstream = throttledWarning(options.log, 'ORIGIN_DATA_UPSTREAM_FAILED');
    this.#tiered =
      options.store &&
      new TieredCache<CachedData>({
        store: options.store,
        shared: options.shared,
        produce: (key, signal, asker) => this.#produce(key, signal, asker as Request | undefined),
        patienceMs: options.patienceMs,
        cache: 'data',
        log: options.log,
      });
  }

  /** The response to a render's fetch, from the cache when the API's own rules allow. */
  fetch(request: Request, use: DataUse): Promise<Response> {
    const url = new URL(request.url);
    return traced(
      channels.dataFetch,
      () => ({ method: request.method, url }),
      (message) => this.#answer(request, url.host, use, message),
    );
  }

  async #answer(
    request: Request,
    host: string,
    use: DataUse,
    message: DataFetchMessage | undefined,
  ): Promise<Response> {
    const started = performance.now();
    let outcome: DataOutcome = 'error';
    if (use.inFlight++ === 0) {
      use.busySince = started;
    }
    try {
      const answered = this.#keeps(request, host, use)
        ? await this.#served(request, host)
        : await this.#passedThrough(request, host);
      outcome = answered.outcome;
      this.#account(use, request, answered);
      if (message !== undefined) {
        message.status = answered.response.status;
      }
      return answered.response;
    } finally {
      if (message !== undefined) {
        message.outcome = outcome;
      }
      if (outcome === 'error') {
        use.failed = true;
        this.#warnUpstream();
      }
      this.#count(host, outcome);
      const ended = performance.now();
      if (--use.inFlight === 0) {
        use.waitedMs += ended - use.busySince;
      }
      if (use.fetches.length < MAX_LISTED_FETCHES) {
        use.fetches.push({ host, outcome, ms: ended - started });
      }
    }
  }

  /** Straight to the API: a request the cache does not keep. */
  async #passedThrough(request: Request, host: string): Promise<Answered> {
    const response = await this.#upstream(request, host);
    return { response, headers: response.headers, outcome: 'bypass' };
  }

  /** Whether this fetch goes through the cache: a plain GET to a host it keeps, nothing said against. */
  #keeps(request: Request, host: string, use: DataUse): boolean {
    if (this.#tiered === undefined || use.bypass || request.method !== 'GET') {
      return false;
    }
    if (this.#hosts !== undefined && !this.#hosts.has(host)) {
      return false;
    }
    // What the request says of caches (fetch's `cache`, as Angular's HttpClient sets it; its own
    // Cache-Control): no-store, no-cache and reload go to the API.
    const cc = request.headers.get('cache-control') ?? '';
    return (
      (request.cache === 'default' || request.cache === 'force-cache') &&
      !/no-store|no-cache/i.test(cc) &&
      !/no-cache/i.test(request.headers.get('pragma') ?? '')
    );
  }

  /**
   * The cached response for a request, through the cache core: a request with credentials is
   * never coalesced with another (its response may be its own: TieredCache.serveAlone), and a
   * waiter whose shared production turned out not to be reusable (private, no-store, too large)
   * asks again for itself.
   */
  async #served(request: Request, host: string): Promise<Answered> {
    const key = this.#keyOf(request);
    const signal = request.signal;
    try {
      const served = credentialed(request)
        ? await this.#tiered!.serveAlone(key, signal, request)
        : await this.#tiered!.serve(key, signal, request);
      const { entry, status } = served;
      if (status.local.collapsed && !entry.reusable) {
        return await this.#alone(request, host);
      }
      return {
        response: responseOf(entry),
        headers: entry.headers,
        entry,
        key,
        outcome: outcomeOf(served),
      };
    } catch (error) {
      if (error instanceof UpstreamError) {
        return { response: error.response(), headers: error.headers, outcome: 'error' };
      }
      if (error instanceof PassedOn) {
        const own = error.take();
        // A waiter of a production passed on to the request that asked first: it asks again.
        return own
          ? { response: own, headers: error.headers, outcome: 'miss' }
          : await this.#alone(request, host);
      }
      throw error;
    }
  }

  /** For a request that may not share another's production: its own, uncached. */
  async #alone(request: Request, host: string): Promise<Answered> {
    const response = await this.#upstream(request, host);
    return { response, headers: response.headers, outcome: 'miss' };
  }

  /**
   * The entry of a key from the API: revalidated with the stored entry's validators when there is
   * one (a 304 refreshes it: RFC 9111 §4.3.4), else fetched. `request`: the render's; undefined for
   * a background refresh, which asks as the stored entry was asked for.
   */
  async #produce(
    key: string,
    signal: AbortSignal | undefined,
    asked: Request | undefined,
  ): Promise<Produced<CachedData>> {
    const stored = this.#store!.entries.peek(key);
    const request = asked ?? (stored && requestAgain(stored));
    if (request === undefined) {
      throw new Error('data cache: nothing to refresh');
    }
    const previous = stored && CachePolicy.fromObject(stored.semantics);
    const headers = new Headers(request.headers);
    for (const [name, value] of Object.entries(
      previous?.revalidationHeaders(requestOf(request)) ?? {},
    )) {
      if (name.startsWith('if-') && typeof value === 'string') {
        headers.set(name, value);
      }
    }
    if (headers.has('if-none-match') || headers.has('if-modified-since')) {
      // fetch adds `Cache-Control: no-cache` to a conditional request that says nothing of caches
      // (the Fetch standard), and servers (Express's and Koa's `fresh`) then answer 200, never 304:
      // `max-age=0` asks the same of caches between (revalidate) and lets the API say 304.
      if (!headers.has('cache-control')) {
        headers.set('cache-control', 'max-age=0');
      }
    }
    const host = new URL(request.url).host;
    const bound = signal ?? AbortSignal.timeout(this.#patienceMs);
    let response = await this.#upstream(new Request(request, { headers, signal: bound }), host);
    if (response.status === 304) {
      const refreshed =
        stored && previous && (await refreshedBy304(request, response, stored, previous));
      if (refreshed) {
        return refreshed;
      }
      // A 304 that matches nothing stored (no validator of its own, another one, or to a request
      // that was not conditional): RFC 9111 §4.3.4 forbids updating with it; ask once more for the
      // whole answer, and a 304 again is the API's failure, never an entry.
      await response.body?.cancel();
      headers.delete('if-none-match');
      headers.delete('if-modified-since');
      response = await this.#upstream(new Request(request, { headers, signal: bound }), host);
      if (response.status === 304) {
        throw new UpstreamError(response, Buffer.alloc(0));
      }
    }
    if (response.status >= 500) {
      throw new UpstreamError(response, await readAll(response, this.#maxEntryBytes));
    }
    return this.#entryOf(request, response);
  }

  /** A new entry from the API's full answer: kept when the rules allow, its Vary remembered. */
  async #entryOf(request: Request, response: Response): Promise<Produced<CachedData>> {
    const read = await readUpTo(response, this.#maxEntryBytes);
    if ('passOn' in read) {
      report(this.#log, 'ORIGIN_DATA_TOO_LARGE', { url: request.url });
      throw new PassedOn(read.passOn);
    }
    const responseHeaders = identityHeaders(headersOf(response), read.body.length);
    const semantics = new CachePolicy(
      requestOf(request),
      { status: response.status, headers: responseHeaders },
      { shared: true },
    );
    const why = whyNotStored(request, response, semantics);
    const entry = entryOf(
      { status: response.status, statusText: response.statusText, headers: responseHeaders },
      read.body,
      semantics,
      groupsOf(appGroups(request), responseHeaders),
    );
    entry.reusable = why === undefined;
    entry.request = { url: request.url, headers: replayableHeaders(request.headers) };
    this.#rememberVary(request, responseHeaders['vary']);
    return { entry, storable: why === undefined, failed: false };
  }

  /** The API's answer, timed, without the origin's own request headers. */
  async #upstream(request: Request, host: string): Promise<Response> {
    const started = performance.now();
    // The app names groups for a request in its Cache-Groups: for the cache, not for the API.
    const headers = new Headers(request.headers);
    headers.delete('cache-groups');
    if (channels.upstream.hasSubscribers) {
      // The trace goes on at the API: a tracer adds its traceparent here.
      channels.upstream.publish({ url: request.url, headers } satisfies UpstreamMessage);
    }
    try {
      return await this.#fetch(new Request(request, { headers }));
    } finally {
      if (channels.upstreamEnded.hasSubscribers) {
        channels.upstreamEnded.publish({
          host: hostLabel(host, this.counts),
          seconds: (performance.now() - started) / 1000,
        } satisfies UpstreamEndedMessage);
      }
    }
  }

  /** A request's key: the URL, and the values of the headers its URL's responses vary on. */
  #keyOf(request: Request): string {
    const names = this.#varyOf.get(request.url);
    if (names === undefined) {
      return `GET ${request.url}`;
    }
    const values = names.map((name) => `${name}=${request.headers.get(name) ?? ''}`).join('\n');
    return `GET ${request.url}\n${values}`;
  }

  #rememberVary(request: Request, vary: string | undefined): void {
    const names = (vary ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== '' && name !== 'accept-encoding');
    if (names.length > 0) {
      this.#varyOf.set(request.url, names.sort());
    } else {
      this.#varyOf.delete(request.url);
    }
  }

  /**
   * What the page built from this response is told: its groups, freshness and privacy, and the key
   * it came under. Data served stale (stale-while-revalidate, stale-if-error, or revalidated on
   * demand and answering for an API that failed) leaves the page no freshness at all, whatever its
   * own max-age said: a page is never fresh for longer than its data is.
   */
  #account(use: DataUse, request: Request, { headers, entry, key, outcome }: Answered): void {
    const semantics = entry
      ? CachePolicy.fromObject(entry.semantics)
      : new CachePolicy(requestOf(request), {
          status: 200,
          headers: headers instanceof Headers ? Object.fromEntries(headers) : headers,
        });
    const { private: isPrivate, freshMs } = dataFreshness(request, headers, semantics);
    use.private ||= isPrivate;
    const left = outcome === 'stale' ? 0 : freshMs;
    if (left !== undefined) {
      use.freshMs = Math.min(use.freshMs ?? Infinity, left);
    }
    for (const group of entry?.groups ?? []) {
      use.groups.add(group);
    }
    if (key !== undefined && use.keys.size < MAX_SOURCES) {
      use.keys.add(key);
    }
  }

  #count(host: string, outcome: DataOutcome): void {
    const label = hostLabel(host, this.counts);
    let counts = this.counts.get(label);
    if (counts === undefined) {
      counts = Object.fromEntries(DATA_OUTCOMES.map((o) => [o, 0])) as Record<DataOutcome, number>;
      this.counts.set(label, counts);
    }
    counts[outcome]++;
  }
}

/** A host as metrics count it: itself, or `other` past MAX_HOSTS (hosts come from URLs). */
function hostLabel(host: string, counts: ReadonlyMap<string, unknown>): string {
  return counts.has(host) || counts.size < MAX_HOSTS ? host : 'other';
}

/** How a served entry came. */
function outcomeOf(served: Served<CachedData>): DataOutcome {
  const outcome = servedOutcome(served);
  return outcome === 'miss' && served.entry.revalidated304 ? 'revalidated' : outcome;
}

/**
 * The stored entry made fresh again by a 304 (RFC 9111 §4.3.4: the 304's headers update the
 * stored ones); undefined when the 304 does not match what is stored (then the API is asked again).
 */
async function refreshedBy304(
  request: Request,
  response: Response,
  stored: CachedData,
  previous: CachePolicy,
): Promise<Produced<CachedData> | undefined> {
  await response.body?.cancel();
  const revalidated = previous.revalidatedPolicy(requestOf(request), {
    status: 304,
    headers: headersOf(response),
  });
  // `matches`, not `modified`: http-cache-semantics reports a 304 that matches nothing as not
  // modified (a browser has no other body to show), with a policy made of the 304 itself.
  if (!revalidated.matches) {
    return undefined;
  }
  const merged = revalidated.policy;
  const { resh } = merged.toObject() as { resh: Record<string, string> };
  const entry = entryOf(
    { status: stored.status, statusText: stored.statusText, headers: resh },
    stored.body,
    merged,
    groupsOf(appGroups(request), resh),
  );
  entry.request = stored.request;
  entry.revalidated304 = true;
  entry.reusable = true;
  return { entry, storable: merged.storable(), failed: false };
}

/** A Response for a render from an entry: its headers as a cache sends them (Age), its body. */
function responseOf(entry: CachedData): Response {
  const headers = CachePolicy.fromObject(entry.semantics).responseHeaders();
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name !== 'warning' && value !== undefined) {
      out.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }
  return new Response(nullBodyStatus(entry.status) ? null : new Uint8Array(entry.body), {
    status: entry.status,
    statusText: entry.statusText,
    headers: out,
  });
}

function nullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304 || (status >= 100 && status < 200);
}

/** Headers of a body as kept: fetch decodes gzip and br, so the bytes kept are identity. */
function identityHeaders(headers: Record<string, string>, length: number): Record<string, string> {
  const kept: Record<string, string> = { ...headers, 'content-length': String(length) };
  delete kept['content-encoding'];
  return kept;
}

/** The app's groups for a request: its Cache-Groups request header (an RFC 8941 list of strings). */
function appGroups(request: Request): string[] {
  const value = request.headers.get('cache-groups');
  return value === null ? [] : (parseCacheGroups(value) ?? []);
}

/** Request headers kept to refresh an entry in the background: never credentials (public data only). */
function replayableHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== 'authorization' && name !== 'cookie' && name !== 'cache-groups') {
      kept[name] = value;
    }
  });
  return kept;
}

function requestAgain(entry: CachedData): Request | undefined {
  return entry.request && new Request(entry.request.url, { headers: entry.request.headers });
}

/** The whole body, at most `max` bytes of it (an error page's). */
async function readAll(response: Response, max: number): Promise<Buffer> {
  const read = await readUpTo(response, max);
  if ('passOn' in read) {
    await read.passOn.body?.cancel();
    return Buffer.alloc(0);
  }
  return read.body;
}

/**
 * The body, when it ends within `max` bytes; else a response that passes on what was read and the
 * rest as it comes (nothing more is held: an endless body costs `max` bytes at most).
 */
async function readUpTo(
  response: Response,
  max: number,
): Promise<{ body: Buffer } | { passOn: Response }> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) {
    return { body: Buffer.alloc(0) };
  }
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      return { body: Buffer.concat(chunks) };
    }
    chunks.push(value);
    length += value.length;
    if (length > max) {
      const rest = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) {
            controller.enqueue(chunk);
          }
        },
        async pull(controller) {
          const next = await reader.read();
          if (next.done) {
            controller.close();
          } else {
            controller.enqueue(next.value);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return {
        passOn: new Response(rest, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        }),
      };
    }
  }
}

export type DataStore = EntryStore<CachedData>;
export type DataTier = SharedTier<CachedData>;

/** This process's data (DATA_CACHE_BYTES): scan-resistant as the pages' store is. */
export function createDataStore(maxBytes: number): DataStore {
  // Revalidated data is asked of its API again (conditionally) before its next use, never served
  // stale to a render: the page that render makes would carry it as new.
  return new EntryStore<CachedData>({ maxBytes, sizeOf: dataBytes, soft: 'revalidate' });
}

/**
 * The data every process and replica shares, under `<prefix>:{data}`: not keyed by the build,
 * since data does not depend on it (a deploy keeps it); REDIS_KEY_PREFIX keeps apps apart.
 */
export function createDataTier(options: {
  link: RedisLink;
  keyPrefix: string;
  maxEntryBytes: number;
  log: Logger;
}): DataTier {
  return new SharedTier<CachedData>({
    ...options,
    namespace: `${options.keyPrefix}:{data}`,
    codec: dataCodec,
  });
}
