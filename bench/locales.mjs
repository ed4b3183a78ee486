// `npm run bench:locales`: what serving every locale of an i18n build from one origin costs. The
// app in src/ built twice from the same sources: plain (dist/) and in three locales (dist-bench/i18n/,
// angular.json's `bench-i18n`: en-US, fr, de), each served by the origin as users run it, and the
// stock server (ng new --ssr's Express + AngularNodeAppEngine) on the same two builds, for what
// Angular's own server pays for the same. All are loaded the same way in interleaved rounds —
// `ssr` (a page never asked before: a render each) and `ssr-cached` (a popular set: render-cache
// hits; the stock server has no render cache), the localized builds spread over their locales —
// and compared by the medians of req/s and of the server's CPU per response, and by memory:
// resident after start, and at its peak under load. Writes bench/results/locales-<time>.md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { ensureBenchPackages } from './install.mjs';
import { ensureBuilds } from './lib/build.mjs';
import {
  ensureLocalizedBuilds,
  hasLocalizedConfiguration,
  I18N_DIST,
  STOCK_I18N_DIST,
} from './lib/localized-build.mjs';
import { STOCK_DIST } from './lib/variants.mjs';
import { serveAppApiOf } from '../scripts/lib/app-api.mjs';
import { killChildren } from '../scripts/lib/child-process.mjs';
import { readLoadPaths } from '../scripts/lib/load-paths.mjs';
import { NODE_FLAGS } from '../scripts/lib/node-flags.mjs';
import { APP_DIST, ROOT } from '../scripts/lib/paths.mjs';
import { readBuildDirs } from '../server/locales/build-layout.ts';
import {
  installCleanup,
  readCpuSeconds,
  readPeakRss,
  resetPeakRss,
  startServer,
  waitUntilIdle,
} from './lib/process.mjs';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '5' },
  },
});
/** Seconds of the same load, not measured, before the measured runs of each fresh process: V8
 * optimizes each locale's copy of the app apart, and a cold start would be charged to the build. */
const WARMUP_S = Number(options.warmup);
const ROUNDS = Number(options.rounds);
const DURATION_S = Number(options.duration);
const CONNECTIONS = Number(options.connections);
/**
 * Pages of the popular set in `ssr-cached`, all locales together (16 per locale of three): every
 * build answers from as many stored pages, so none has its hot bytes in fewer CPU cache lines.
 */
const POPULAR = 48;

/** The localized build's locales and their URL prefixes, from the build's own engine manifest. */
async function localeSites() {
  const { locales } = await readBuildDirs(I18N_DIST);
  return {
    locales: locales.map(({ locale }) => locale),
    prefixes: locales.map(({ prefix }) => prefix),
  };
}

/** @typedef {{ name: string, dist: string, prefixes: string[], cache: boolean, env?: Record<string, string> }} Build */

/** One load run of `seconds`; `nextPath(k)` is the k-th request's path. */
async function load(server, nextPath, seconds = DURATION_S) {
  let k = 0;
  let hits = 0;
  const cpuBefore = readCpuSeconds(server.pid);
  resetPeakRss(server.pid);
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (req) => ({ ...req, path: nextPath(k++) }),
        onResponse: (_status, _body, _context, headers) => {
          for (const [name, value] of Object.entries(headers ?? {}))
            if (name.toLowerCase() === 'cache-status' && /;\s*hit\b/.test(String(value))) hits++;
        },
      },
    ],
  });
  const cpu = readCpuSeconds(server.pid) - cpuBefore;
  const peakRss = readPeakRss(server.pid);
  await waitUntilIdle([server.pid]);
  const ok = result['2xx'];
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts: not a valid row`,
    );
  }
  return { rps: ok / seconds, usPerResponse: (cpu / ok) * 1e6, hitRatio: hits / ok, peakRss };
}

/** Resident memory of the server now (VmRSS), in bytes. */
function rss(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/**
 * @param {Build} build @param {ReturnType<typeof readLoadPaths>['rendered']} rendered
 * @param {Record<string, string>} dataEnv where every server's renders fetch the app's API
 */
async function measure(build, rendered, round, dataEnv) {
  const server = await startServer({
    command: [process.execPath, ...NODE_FLAGS, join(build.dist, 'server/server.mjs')],
    env: {
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      NG_ALLOWED_HOSTS: undefined,
      ...dataEnv,
      ...build.env,
    },
    cwd: ROOT,
    ready: /listening on/,
  });
  try {
    const { prefixes } = build;
    // The same pages in every locale: the localized build's requests go round its locales.
    const page = (prefix, i) => `${prefix}${rendered.at(i)}`;
    // One request for each locale's page kinds, then the resident set of a process that has served.
    for (const prefix of prefixes) {
      await fetch(`${server.url}${page(prefix, 0)}`);
    }
    const startedRss = rss(server.pid);
    if (WARMUP_S > 0) {
      await load(server, (k) => page(prefixes[k % prefixes.length], 500_000 + k), WARMUP_S);
    }
    // Distinct pages, never asked before in this process (a new range each round).
    const offset = 1_000 + round * 200_000;
    const ssr = await load(server, (k) => page(prefixes[k % prefixes.length], offset + k));
    for (const prefix of prefixes) {
      for (let i = 0; i < POPULAR / prefixes.length; i++) {
        await fetch(`${server.url}${page(prefix, i)}`);
      }
    }
    if (ssr.hitRatio > 0.01) throw new Error(`ssr: ${ssr.hitRatio} of answers were cache hits`);
    if (!build.cache) return { startedRss, ssr, cached: undefined };
    const cached = await load(server, (k) =>
      page(
        prefixes[k % prefixes.length],
        Math.floor(k / prefixes.length) % (POPULAR / prefixes.length),
      ),
    );
    if (cached.hitRatio < 0.99) throw new Error(`ssr-cached: only ${cached.hitRatio} were hits`);
    return { startedRss, ssr, cached };
  } finally {
    await server.stop();
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const num = (value, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  if (!hasLocalizedConfiguration()) {
    throw new Error(
      "bench:locales compares the app in src/ plain with the same app in three locales (angular.json's " +
        '`bench-i18n` configuration), which this workspace has not: an app localized already ' +
        '(ng new --locales) is measured by `npm run bench`, on its source locale',
    );
  }
  installCleanup();
  await ensureBenchPackages({ log: console.log });
  ensureBuilds({ stock: true, skip: false, log: console.log });
  await ensureLocalizedBuilds();
  const { rendered } = readLoadPaths();
  if (rendered === undefined || !rendered.cached) {
    throw new Error('load-paths.json names no rendered page with a shared-cache policy ("cached")');
  }
  /** @type {Build[]} */
  const { locales, prefixes } = await localeSites();
  const builds = [
    { name: 'origin, plain', dist: APP_DIST, prefixes: [''], cache: true },
    { name: `origin, ${prefixes.length} locales`, dist: I18N_DIST, prefixes, cache: true },
    // The same localized process asked for its source locale only: what the routing costs,
    // apart from keeping several apps warm in one process.
    { name: `origin, ${prefixes[0]} only`, dist: I18N_DIST, prefixes: [prefixes[0]], cache: true },
    // One deployment per locale (LOCALES): a process that loads and serves one locale's app.
    {
      name: `origin, LOCALES=${locales[0]}`,
      dist: I18N_DIST,
      prefixes: [prefixes[0]],
      cache: true,
      env: { LOCALES: locales[0] },
    },
    { name: 'stock, plain', dist: STOCK_DIST, prefixes: [''], cache: false },
    { name: `stock, ${prefixes.length} locales`, dist: STOCK_I18N_DIST, prefixes, cache: false },
  ];
  // Each localized build against its own server's plain build.
  const plainOf = [0, 0, 0, 0, 4, 4];
  const runs = builds.map(() => []);
  // Pages made of data: every server's renders fetch the app's API from here, and the origin's
  // data cache is off, so both servers pay the same fetches and locales are what differs (as the
  // main bench's ssr does: docs/benchmark.md).
  const api = await serveAppApiOf((await readBuildDirs(APP_DIST)).locales[0].serverDir);
  const dataEnv = api ? { API_URL: api.url, DATA_CACHE_BYTES: '0' } : {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Interleaved, the order turned each round: no build always runs on a warmer machine.
      const order = builds.map((_, i) => (i + round) % builds.length);
      for (const i of order) {
        console.log(`round ${round + 1}/${ROUNDS}: ${builds[i].name}…`);
        runs[i].push(await measure(builds[i], rendered, round, dataEnv));
      }
    }
  } finally {
    await api?.close();
  }
  const med = (i, pick) => median(runs[i].map(pick));
  const row = (label, pick, format, lowerIsBetter) => {
    const cells = builds.map((_, i) => {
      if (runs[i].some((run) => pick(run) === undefined)) return '—';
      const value = med(i, pick);
      const plain = med(plainOf[i], pick);
      return plainOf[i] === i ? format(value) : `${format(value)} (${(value / plain).toFixed(2)}×)`;
    });
    return `| ${label}${lowerIsBetter ? ' (lower is better)' : ''} | ${cells.join(' | ')} |`;
  };
  const table = [
    `| ${ROUNDS} interleaved rounds, medians (ratio to the same server's plain build) | ${builds.map(({ name }) => name).join(' | ')} |`,
    `|---|${builds.map(() => '---:').join('|')}|`,
    row(
      'ssr: req/s',
      (r) => r.ssr.rps,
      (v) => num(v),
      false,
    ),
    row(
      'ssr: server CPU µs per response',
      (r) => r.ssr.usPerResponse,
      (v) => num(v),
      true,
    ),
    row(
      'ssr-cached: req/s',
      (r) => r.cached?.rps,
      (v) => num(v),
      false,
    ),
    row(
      'ssr-cached: server CPU µs per response',
      (r) => r.cached?.usPerResponse,
      (v) => num(v, 1),
      true,
    ),
    row('memory after start (RSS)', (r) => r.startedRss, mib, true),
    row('memory at peak under ssr (VmHWM)', (r) => r.ssr.peakRss, mib, true),
  ].join('\n');
  const report = [
    '# Every locale from one origin: localized against plain',
    '',
    `The app in src/ (load-paths.json: \`${rendered.path}\`), plain (dist/) and in three locales (dist-bench/i18n/: ${builds[1].prefixes.join(', ')}), each served by the origin (CommonEngine, render cache on) and by the stock server (Express + AngularNodeAppEngine, no render cache). ${DURATION_S} s per load after ${WARMUP_S} s of warm-up on fresh processes, ${CONNECTIONS} connections; \`ssr\` asks each page once, the localized build's requests going round its locales (or asking its source locale only: of a process holding every locale's app, and of one holding that locale's alone, as one deployment per locale runs with \`LOCALES\`); \`ssr-cached\` asks ${POPULAR} pages in all (as many per locale), stored beforehand.`,
    '',
    table,
    '',
  ].join('\n');
  console.log(`\n${report}`);
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `locales-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(file, report);
  console.log(`Written to ${relative(ROOT, file)}`);
}

try {
  await main();
} catch (error) {
  console.error(`bench:locales: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  killChildren();
}
