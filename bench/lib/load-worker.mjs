// The load generator, in its own process so that it can be pinned to a CPU of its own (taskset)
// and never shares an event loop with the runner's bookkeeping. It receives one job at a time over
// IPC, runs autocannon (or, for a fixed rate, open-loop.mjs) for a bounded time and answers with a
// summary (never the raw histograms).
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { runOpenLoop } from './open-loop.mjs';

// autocannon appends every response body to a string, for options the bench never sets
// (onResponse, verifyBody, expectBody): decoding bodies nobody reads cost the load generator more
// than the servers cost to send them, compressed (binary) bodies most of all, and capped the
// req/s of every scenario with them (bench/README.md#the-figures-behind-the-codes-comments).
const require = createRequire(import.meta.url);
require('autocannon/lib/pipelinedRequestsQueue.js').prototype.addBody = () => undefined;
import { nextProductPath } from './scenarios.mjs';

/**
 * @typedef {{ path: string, method?: string, headers?: Record<string, string>, rotate?: 'product' | 'visitor',
 *   session?: string }} LoadRequest (session: the cookie a visitor's session goes in, `sid` by default)
 * @typedef {{ id: number, url: string, urls?: string[], requests: LoadRequest[], connections: number,
 *   duration: number, pipelining: number, timeout: number, rate?: number }} LoadJob
 */

/**
 * A response a cache answered (RFC 9211 Cache-Status with a `hit`, as the origin's render cache
 * and its shared tier send): for a page that must be rendered per request, not a render.
 */
const CACHE_HIT = /;\s*hit\b/i;
/** Rotating pages answered from a cache during the current job (see CACHE_HIT). */
let cacheHits = 0;

/** Counts a rotating page's answer that came from a cache; `headers` as autocannon gives them. */
function countCacheHit(headers) {
  for (const [name, value] of Object.entries(headers))
    if (name.toLowerCase() === 'cache-status' && CACHE_HIT.test(String(value))) cacheHits++;
}

/** Visitors so far, and a prefix of this process's: every session the load sends is new. */
let visitors = 0;
const SESSION_PREFIX = Math.random().toString(36).slice(2, 8);

/**
 * The request as sent this time: a rotating one asks for the next product; a visitor's carries a
 * session of its own and analytics cookies beside the cookies the scenario gave it. One counter for
 * every connection, so consecutive requests ask for different products, and come from different
 * visitors.
 * @param {LoadRequest} request
 */
function resolve(request) {
  if (request.rotate === 'product') return { ...request, path: nextProductPath() };
  if (request.rotate !== 'visitor') return request;
  const n = ++visitors;
  const session = `${request.session ?? 'sid'}=${SESSION_PREFIX}${n}; _ga=GA1.2.${n}.1764000000; _gid=GA1.2.${n}`;
  const declared = request.headers?.cookie;
  return {
    ...request,
    headers: { ...request.headers, cookie: declared ? `${session}; ${declared}` : session },
  };
}

/** @param {LoadRequest} request */
function toAutocannonRequest(request) {
  const { path, method = 'GET', headers, rotate } = request;
  return {
    path,
    method,
    ...(headers ? { headers } : {}),
    ...(rotate
      ? {
          setupRequest: (req) => {
            const sent = resolve(request);
            return { ...req, path: sent.path, headers: sent.headers ?? req.headers };
          },
          onResponse: (_status, _body, _context, headers) => countCacheHit(headers),
        }
      : {}),
  };
}

/** @param {LoadJob} job */
async function run(job) {
  cacheHits = 0;
  if (job.rate) {
    const result = await runOpenLoop({
      ...job,
      next: (index) => resolve(job.requests[index % job.requests.length]),
      onResponse: (request, headers) => request.rotate && countCacheHit(headers),
    });
    return { ...result, cacheHits };
  }
  // Several servers behind the same load (ssr-shared's two origins): the connections are split
  // evenly between them, one autocannon instance per server started together, and their histograms
  // merged, so req/s and latency are those of the pair, as a load balancer in front would see them.
  const urls = job.urls ?? [job.url];
  const instances = urls.map((url, i) =>
    autocannon({
      url,
      connections:
        Math.floor(job.connections / urls.length) + (i < job.connections % urls.length ? 1 : 0),
      duration: job.duration,
      pipelining: job.pipelining,
      timeout: job.timeout,
      requests: job.requests.map(toAutocannonRequest),
      ...(urls.length > 1 ? { skipAggregateResult: true } : {}),
    }),
  );
  current = instances;
  const cpuBefore = process.cpuUsage();
  const results = await Promise.all(instances);
  const cpu = process.cpuUsage(cpuBefore);
  current = undefined;
  const result =
    results.length > 1
      ? autocannon.aggregateResult(results, { url: urls[0], connections: job.connections })
      : results[0];
  /** @type {Record<string, number>} */
  const statusCodes = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = Number(count);
  }
  return {
    requests: result.requests.total,
    duration: result.duration,
    rps: result.duration > 0 ? result.requests.total / result.duration : 0,
    latency: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      avg: result.latency.average,
      max: result.latency.max,
    },
    bytes: result.throughput.total,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    statusCodes,
    cacheHits,
    // Share of one CPU this process used: near 1, the load generator, not the server, set the pace.
    loadCpu: result.duration > 0 ? (cpu.user + cpu.system) / 1e6 / result.duration : 0,
  };
}

/** @type {ReturnType<typeof autocannon>[] | undefined} */
let current;

process.on('message', async (/** @type {{ type: string, job?: LoadJob }} */ message) => {
  if (message.type === 'stop') {
    for (const instance of current ?? []) instance.stop();
    process.disconnect?.();
    return;
  }
  if (message.type !== 'run' || !message.job) return;
  const { job } = message;
  try {
    process.send?.({ type: 'result', id: job.id, result: await run(job) });
  } catch (error) {
    process.send?.({ type: 'error', id: job.id, error: String(error?.stack ?? error) });
  }
});

// The runner is gone (or asked us to stop): never keep loading a server nobody measures.
process.on('disconnect', () => {
  for (const instance of current ?? []) instance.stop();
  process.exit(0);
});
process.send?.({ type: 'ready' });
