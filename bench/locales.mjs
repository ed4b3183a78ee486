// `npm run bench:locales`: what serving every locale of an i18n build from one origin costs. The
// app in src/ built twice from the same sources: plain (dist/) and in three locales (dist-bench/i18n/,
// angular.json's `bench-i18n`: en-US, fr, de), each served by the origin as users run it. Both are
// loaded the same way in interleaved rounds — `ssr` (a page never asked before: a render each) and
// `ssr-cached` (a popular set: render-cache hits), the localized one spread over its locales — and
// compared by the medians of req/s and of the server's CPU per response, and by memory: resident
// after start, and at its peak under load. Writes bench/results/locales-<time>.md.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { compressDist } from '../scripts/compress-build.mjs';
import { killChildren } from '../scripts/lib/child-process.mjs';
import { readLoadPaths } from '../scripts/lib/load-paths.mjs';
import { newestMtime } from '../scripts/lib/newest-mtime.mjs';
import { NODE_FLAGS } from '../scripts/lib/node-flags.mjs';
import { APP_DIST, ROOT } from '../scripts/lib/paths.mjs';
import {
  installCleanup,
  readCpuSeconds,
  readPeakRss,
  resetPeakRss,
  startServer,
  waitUntilIdle,
} from './lib/process.mjs';

const I18N_DIST = join(ROOT, 'dist-bench/i18n');
const I18N_INPUTS = ['src', 'public', 'server', 'patches', 'bench/locale', 'angular.json'];
const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
  },
});
const ROUNDS = Number(options.rounds);
const DURATION_S = Number(options.duration);
const CONNECTIONS = Number(options.connections);
/** Pages of the popular set in `ssr-cached`, per locale: every one stored after the warm-up. */
const POPULAR = 16;

/** Builds `what` with `args` when `output` is older than its inputs; then its compressed copies. */
async function ensureLocalizedBuild() {
  const built = newestMtime(join(I18N_DIST, 'server/server.mjs'));
  const changed = Math.max(...I18N_INPUTS.map((input) => newestMtime(join(ROOT, input))));
  if (built === 0 || changed > built) {
    console.log('Building the localized app (angular.json bench-i18n → dist-bench/i18n/)…');
    const ng = join(ROOT, 'node_modules/@angular/cli/bin/ng.js');
    const result = spawnSync(
      process.execPath,
      [ng, 'build', '--configuration', 'production,bench-i18n'],
      { cwd: ROOT, stdio: 'inherit' },
    );
    if (result.status !== 0) throw new Error('the localized build failed');
  }
  await compressDist(I18N_DIST);
}

/** The URL prefixes of the localized build's locales, from the build's own engine manifest. */
async function localePrefixes() {
  const manifest = await import(
    pathToFileURL(join(I18N_DIST, 'server/angular-app-engine-manifest.mjs')).href
  );
  const { basePath, supportedLocales } = manifest.default;
  return Object.values(supportedLocales).map((subPath) =>
    `${basePath.replace(/\/$/, '')}/${subPath}`.replace(/\/$/, ''),
  );
}

/** @typedef {{ name: string, dist: string, prefixes: string[] }} Build */

/** One load run; `nextPath(k)` is the k-th request's path. */
async function load(server, nextPath) {
  let k = 0;
  let hits = 0;
  const cpuBefore = readCpuSeconds(server.pid);
  resetPeakRss(server.pid);
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: DURATION_S,
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
  return { rps: ok / DURATION_S, usPerResponse: (cpu / ok) * 1e6, hitRatio: hits / ok, peakRss };
}

/** Resident memory of the server now (VmRSS), in bytes. */
function rss(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** @param {Build} build @param {ReturnType<typeof readLoadPaths>['rendered']} rendered */
async function measure(build, rendered, round) {
  const server = await startServer({
    command: [process.execPath, ...NODE_FLAGS, join(build.dist, 'server/server.mjs')],
    env: { HOST: '127.0.0.1', NODE_ENV: 'production', NG_ALLOWED_HOSTS: undefined },
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
    // Distinct pages, never asked before in this process (a new range each round).
    const offset = 1_000 + round * 200_000;
    const ssr = await load(server, (k) => page(prefixes[k % prefixes.length], offset + k));
    for (const prefix of prefixes) {
      for (let i = 0; i < POPULAR; i++) await fetch(`${server.url}${page(prefix, i)}`);
    }
    const cached = await load(server, (k) =>
      page(prefixes[k % prefixes.length], Math.floor(k / prefixes.length) % POPULAR),
    );
    if (ssr.hitRatio > 0.01) throw new Error(`ssr: ${ssr.hitRatio} of answers were cache hits`);
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
  installCleanup();
  const ensure = spawnSync(process.execPath, [join(ROOT, 'scripts/ensure-build.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (ensure.status !== 0) throw new Error('the production build failed');
  await ensureLocalizedBuild();
  const { rendered } = readLoadPaths();
  if (rendered === undefined || !rendered.cached) {
    throw new Error('load-paths.json names no rendered page with a shared-cache policy ("cached")');
  }
  /** @type {Build[]} */
  const builds = [
    { name: 'plain (1 locale)', dist: APP_DIST, prefixes: [''] },
    { name: 'localized (3 locales)', dist: I18N_DIST, prefixes: await localePrefixes() },
  ];
  const runs = builds.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, the order swapped each round: neither build always runs on a warmer machine.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      console.log(`round ${round + 1}/${ROUNDS}: ${builds[i].name}…`);
      runs[i].push(await measure(builds[i], rendered, round));
    }
  }
  const med = (i, pick) => median(runs[i].map(pick));
  const row = (label, pick, format, lowerIsBetter) => {
    const [plain, localized] = [med(0, pick), med(1, pick)];
    const ratio = localized / plain;
    return `| ${label} | ${format(plain)} | ${format(localized)} | ${ratio.toFixed(2)}× ${lowerIsBetter ? '(lower is better)' : ''} |`;
  };
  const table = [
    `| ${ROUNDS} interleaved rounds, medians | ${builds[0].name} | ${builds[1].name} | localized / plain |`,
    '|---|---:|---:|---:|',
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
      (r) => r.cached.rps,
      (v) => num(v),
      false,
    ),
    row(
      'ssr-cached: server CPU µs per response',
      (r) => r.cached.usPerResponse,
      (v) => num(v, 1),
      true,
    ),
    row('memory after start (RSS)', (r) => r.startedRss, mib, true),
    row('memory at peak under ssr (VmHWM)', (r) => r.ssr.peakRss, mib, true),
  ].join('\n');
  const report = [
    '# Every locale from one origin: localized against plain',
    '',
    `The app in src/ (load-paths.json: \`${rendered.path}\`), plain (dist/) and in three locales (dist-bench/i18n/: ${builds[1].prefixes.join(', ')}), each served by the origin (CommonEngine, render cache on). ${DURATION_S} s per load, ${CONNECTIONS} connections; \`ssr\` asks each page once, the localized build's requests going round its locales; \`ssr-cached\` asks ${POPULAR} pages per locale, stored beforehand.`,
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
