// The load generator, in its own process so that it can be pinned to a CPU of its own (taskset)
// and never shares an event loop with the runner's bookkeeping. It receives one job at a time over
// IPC, runs autocannon (or, for a fixed rate, open-loop.mjs) for a bounded time and answers with a
// summary (never the raw histograms).
import autocannon from 'autocannon';
import { runOpenLoop } from './open-loop.mjs';
import { nextProductPath } from './scenarios.mjs';

/**
 * @typedef {{ path: string, method?: string, headers?: Record<string, string>, rotate?: 'product' }} LoadRequest
 * @typedef {{ id: number, url: string, requests: LoadRequest[], connections: number, duration: number,
 *   pipelining: number, timeout: number, rate?: number }} LoadJob
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
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.duration,
    pipelining: job.pipelining,
    timeout: job.timeout,
    requests: job.requests.map(toAutocannonRequest),
  });
  current = instance;
  const cpuBefore = process.cpuUsage();
  const result = await instance;
  const cpu = process.cpuUsage(cpuBefore);
  current = undefined;
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

/** @type {ReturnType<typeof autocannon> | undefined} */
let current;

process.on('message', async (/** @type {{ type: string, job?: LoadJob }} */ message) => {
  if (message.type === 'stop') {
    current?.stop();
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
  current?.stop();
  process.exit(0);
});
process.send?.({ type: 'ready' });
