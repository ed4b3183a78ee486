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
 * @typedef {{ path: string, method?: string, headers?: Record<string, string>, rotate?: 'product' }} LoadRequest
 * @typedef {{ id: number, url: string, urls?: string[], requests: LoadRequest[], connections: number,
 *   duration: number, pipelining: number, timeout: number, rate?: number }} LoadJob
 */

/**
 * The request as sent this time: a rotating one asks for the next product. One counter for every
 * connection, so consecutive requests ask for different products.
 * @param {LoadRequest} request
 */
function resolve(request) {
  return request.rotate === 'product' ? { ...request, path: nextProductPath() } : request;
}

/** @param {LoadRequest} request */
function toAutocannonRequest(request) {
  const { path, method = 'GET', headers, rotate } = request;
  return {
    path,
    method,
    ...(headers ? { headers } : {}),
    ...(rotate ? { setupRequest: (req) => ({ ...req, path: resolve(request).path }) } : {}),
  };
}

/** @param {LoadJob} job */
async function run(job) {
  if (job.rate) {
    return runOpenLoop({
      ...job,
      next: (index) => resolve(job.requests[index % job.requests.length]),
    });
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
