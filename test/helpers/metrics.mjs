// The Prometheus endpoint as the tests read it (METRICS_PORT): where the origin says it is, its text
// parsed into samples, and sums over them.
import assert from 'node:assert/strict';
import { request } from './origin.mjs';
import { waitFor } from './wait.mjs';

/** What the origin prints once its metrics endpoint is bound. */
export const METRICS_LINE = /Metrics on (http:\/\/[^\s"]+)\/metrics/;
/** The environment that turns metrics on, on a free loopback port. */
export const METRICS_ON = { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' };

/**
 * Where the origin says its metrics are: it prints the port it bound, as it does its own, in
 * either order (two servers bind at once).
 */
export function metricsUrl(origin) {
  return waitFor(() => METRICS_LINE.exec(origin.stdout())?.[1], {
    what: 'metrics address in the log',
    timeoutMs: 15_000,
    seen: origin.stdout,
  });
}

/**
 * The Prometheus text format, parsed: `# HELP`/`# TYPE` lines give each family its type, every
 * other line is one sample `name{label="value",…} value`.
 * @returns {{ types: Map<string, string>, samples: { name: string, labels: Record<string, string>, value: number }[] }}
 */
export function parseExposition(text) {
  const types = new Map();
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(sample, `not a sample line: ${line}`);
    const labels = {};
    for (const [, name, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name] = value.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    // Go's ParseFloat, as Prometheus reads it: NaN and ±Inf in any case (prom-client writes `Nan`
    // for an event-loop lag not yet measured).
    const special = /^([+-]?)(inf|nan)$/i.exec(sample[3]);
    const value = special
      ? special[2].toLowerCase() === 'nan'
        ? NaN
        : (special[1] === '-' ? -1 : 1) * Infinity
      : Number(sample[3]);
    assert.ok(special || !Number.isNaN(value), `not a number in: ${line}`);
    samples.push({ name: sample[1], labels, value });
  }
  return { types, samples };
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(metrics, name, labels = {}) {
  return metrics.samples
    .filter((s) => s.name === name)
    .filter((s) => Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

export async function scrape(url) {
  const res = await request(url, '/metrics');
  assert.equal(res.status, 200, res.text);
  return { res, metrics: parseExposition(res.text) };
}

/**
 * Scrapes until `done(metrics)` holds (a response is counted at `finish`, just after it is sent),
 * for up to `timeoutMs`; then the last scrape either way, for the caller's assertions to say what
 * differs. A scrape that fails fails at once.
 */
export async function scrapeUntil(url, done, timeoutMs = 5_000) {
  let metrics;
  let failure;
  const scraped = async () => {
    try {
      metrics = (await scrape(url)).metrics;
      return done(metrics);
    } catch (error) {
      failure = error;
      return true;
    }
  };
  // `scraped` never throws: waitFor rejects only when the time is up.
  await waitFor(scraped, { what: 'scrape that satisfies the test', timeoutMs }).catch(() => {});
  if (failure) throw failure;
  return metrics;
}
