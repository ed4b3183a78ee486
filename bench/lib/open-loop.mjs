// A constant-rate (open-loop) load for the equal-load latency runs. autocannon's rate limit sends
// each connection's quota back to back at the start of every second, so its latencies measure how
// fast a burst drains, and it adds synthetic samples for coordinated omission. Here request k is
// due at start + k / rate whatever the server did with earlier ones, and its latency is counted
// from that moment: a server that falls behind shows it in its percentiles (as wrk2 does).
import { Agent, request as httpRequest } from 'node:http';

/**
 * @param {{ url: string, requests: { path: string, method?: string, headers?: Record<string, string> }[],
 *   next: (index: number) => { path: string, method?: string, headers?: Record<string, string> },
 *   onResponse?: (request: { path: string, rotate?: string }, headers: import('node:http').IncomingHttpHeaders) => void,
 *   connections: number, duration: number, rate: number, timeout: number }} job
 * @returns {Promise<import('./load.mjs').LoadResult>}
 */
export async function runOpenLoop(job) {
  const target = new URL(job.url);
  // At most `connections` sockets, as in the flat-out runs; requests due while all are busy wait
  // in the agent's queue, and that wait counts in their latency.
  const agent = new Agent({ keepAlive: true, maxSockets: job.connections });
  const latencies = [];
  const statusCodes = {};
  let bytes = 0;
  let errors = 0;
  let timeouts = 0;
  let outstanding = 0;
  let sent = 0;
  let lastAnswer = 0;
  let onIdle;

  const send = (due) => {
    const request = job.next(sent++);
    const { path, method = 'GET', headers = {} } = request;
    outstanding++;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      outstanding--;
      if (outstanding === 0) onIdle?.();
    };
    const req = httpRequest(
      { host: target.hostname, port: target.port, path, method, headers, agent },
      (res) => {
        let length = 0;
        res.on('data', (chunk) => (length += chunk.length));
        res.on('end', () => {
          lastAnswer = performance.now();
          latencies.push(lastAnswer - due);
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1;
          job.onResponse?.(request, res.headers);
          // Body plus an estimate of the head, like autocannon's byte count.
          bytes += length + res.rawHeaders.reduce((sum, part) => sum + part.length + 2, 17);
          done();
        });
        res.on('error', () => {
          errors++;
          done();
        });
      },
    );
    req.setTimeout(job.timeout * 1000, () => {
      timeouts++;
      req.destroy(new Error('timeout'));
    });
    req.on('error', () => {
      errors++;
      done();
    });
    req.end();
  };

  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + job.duration * 1000;
  const interval = 1000 / job.rate;
  // A coarse timer that sends everything due since its last tick: timer jitter delays a send, but
  // never moves its due time.
  await new Promise((resolve) => {
    const tick = () => {
      const now = Math.min(performance.now(), end);
      while (start + sent * interval <= now) send(start + sent * interval);
      if (now >= end) resolve(undefined);
      else setTimeout(tick, Math.max(0, Math.min(5, start + sent * interval - performance.now())));
    };
    tick();
  });
  // Answers still owed are waited for (each is bounded by its timeout), so a slow server's
  // slowest requests are not left out of its percentiles.
  if (outstanding > 0) await new Promise((resolve) => (onIdle = resolve));
  // Over the time it took to answer them all: a server that fell behind shows a lower rate.
  const duration = (Math.max(end, lastAnswer) - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const at = (share) =>
    latencies.length
      ? latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))]
      : 0;
  return {
    requests: latencies.length,
    duration,
    rps: latencies.length / duration,
    latency: {
      p50: at(0.5),
      p99: at(0.99),
      avg: latencies.length
        ? latencies.reduce((sum, value) => sum + value, 0) / latencies.length
        : 0,
      max: at(1),
    },
    bytes,
    errors,
    timeouts,
    mismatches: 0,
    statusCodes,
    loadCpu: (cpu.user + cpu.system) / 1e6 / ((performance.now() - start) / 1000),
  };
}
