// Bounded load over loopback with autocannon, plus RSS sampling of the origin while it runs.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/**
 * @param {{ url: string, connections: number, duration?: number, amount?: number, path: (n: number) => string, timeout?: number, headers?: Record<string, string> }} options
 */
export async function load({ url, connections, duration, amount, path, timeout = 10, headers }) {
  let n = 0;
  const result = await autocannon({
    url,
    connections,
    ...(amount === undefined ? { duration } : { amount }),
    timeout,
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: path(n++) }) }],
  });
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, Number(count)]),
  );
  return { result, statuses, sent: n };
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the samples in bytes. */
export function sampleRss(pid, intervalMs = 250) {
  const samples = [rssOf(pid)];
  const timer = setInterval(() => {
    try {
      samples.push(rssOf(pid));
    } catch {
      clearInterval(timer);
    }
  }, intervalMs);
  return () => {
    clearInterval(timer);
    return samples;
  };
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}
