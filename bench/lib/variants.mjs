// The servers compared. All serve the same Angular build and render through the same app bundle;
// only the server around it differs. Everything but `origin` lives under bench/ and never ships.
import { join, resolve } from 'node:path';
import { NODE_FLAGS } from '../../scripts/lib/node-flags.mjs';
import { APP_DIST, ROOT } from '../../scripts/lib/paths.mjs';
import { BUN } from '../install.mjs';

export { ROOT };
/** The build measured: BENCH_DIST (another build of an app, used as it is), else dist/. */
export const DIST = process.env.BENCH_DIST ? resolve(process.env.BENCH_DIST) : APP_DIST;
/** The stock server's build: BENCH_STOCK_DIST (used as it is), else the one the bench builds. */
export const DEFAULT_STOCK_DIST = join(ROOT, 'dist-bench/stock');
export const STOCK_DIST = process.env.BENCH_STOCK_DIST
  ? resolve(process.env.BENCH_STOCK_DIST)
  : DEFAULT_STOCK_DIST;
const VARIANTS_DIR = join(ROOT, 'bench/variants');

/**
 * A Node variant's command: every one runs with the origin's own flags (NODE_FLAGS). Each sits idle
 * while the others are loaded, and without them V8 shrinks an idle heap and then regrows it slowly,
 * which charged the first variant of a round for its wait (1.3-1.5x CPU per render after 150 s).
 */
const node = (...args) => [process.execPath, ...NODE_FLAGS, ...args];

/**
 * @typedef {{ name: string, label: string, runtime: 'node' | 'bun', about: string, criticalCss: string,
 *   command: () => string[], env: Record<string, string | undefined>, dist: string, ablation?: boolean,
 *   workersPerCpu?: boolean, peer?: boolean }} Variant
 *   (peer: a server written around CommonEngine alone, as its authors would; one that cannot serve
 *   one of the app's routes as the app declares it, e.g. a status set by a server route, which only
 *   Angular's engine and the origin read, is reported as such, not as a wrong answer)
 */

/** How each variant inlines critical CSS: the setting is the same (on), the mechanism is not. */
const BEASTIES_PER_RENDER =
  "CommonEngine's default inlineCriticalCss (a full Beasties pass per render)";

/** Same for every variant: loopback only, the origin's default host list, production mode. */
const COMMON_ENV = {
  HOST: '127.0.0.1',
  NODE_ENV: 'production',
  NG_ALLOWED_HOSTS: undefined,
  RENDER_ENGINE: undefined,
  BENCH_DIST: DIST,
};

/** @type {Variant[]} */
export const VARIANTS = [
  {
    name: 'origin',
    criticalCss:
      'stylesheets compiled at startup (beasties compiler/runtime, server/pages/critical-css.ts)',
    label: 'origin (this project: Koa + CommonEngine)',
    runtime: 'node',
    about: `This project's Koa origin, run as users run it (npm run serve:ssr): node ${NODE_FLAGS.join(' ')} dist/server/server.mjs.`,
    command: () => node(join(DIST, 'server/server.mjs')),
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    name: 'origin-app',
    criticalCss: "AngularNodeAppEngine with the plans its build compiled (as in 'stock')",
    label: 'origin-app (this project with RENDER_ENGINE=app: Koa + AngularNodeAppEngine)',
    runtime: 'node',
    // Beside `origin` (same server, other engine) and `stock` (same engine, Express around it).
    about:
      "The same server rendering through AngularNodeAppEngine (RENDER_ENGINE=app) instead of CommonEngine: everything around the render is the origin's.",
    command: () => node(join(DIST, 'server/server.mjs')),
    env: { ...COMMON_ENV, RENDER_ENGINE: 'app' },
    dist: DIST,
  },
  {
    name: 'origin-nocache',
    criticalCss:
      'stylesheets compiled at startup (beasties compiler/runtime, server/pages/critical-css.ts)',
    label: 'origin-nocache (ablation: RENDER_CACHE_BYTES=0, no render cache)',
    runtime: 'node',
    // In the default run, not with the other ablations: beside `origin` it shows what storing
    // pages costs a miss (`ssr`) and what the cache saves (`ssr-cached`, rendered every time here).
    about:
      'The origin with its render cache off (RENDER_CACHE_BYTES=0): every page rendered per request, nothing stored.',
    command: () => node(join(DIST, 'server/server.mjs')),
    env: { ...COMMON_ENV, RENDER_CACHE_BYTES: '0' },
    dist: DIST,
  },
  {
    name: 'origin-cluster',
    criticalCss:
      'stylesheets compiled at startup (beasties compiler/runtime, server/pages/critical-css.ts)',
    label: 'origin-cluster (this project with WORKERS: one worker per server CPU, at least 2)',
    runtime: 'node',
    about:
      'The same server with WORKERS set to the CPUs the servers may use (at least 2): a node:cluster primary and that many workers sharing the port.',
    command: () => node(join(DIST, 'server/server.mjs')),
    env: COMMON_ENV,
    dist: DIST,
    workersPerCpu: true,
  },
  {
    name: 'origin-bun',
    criticalCss:
      'stylesheets compiled at startup (beasties compiler/runtime, server/pages/critical-css.ts)',
    label: 'origin-bun (this project under Bun: npm run serve:ssr:bun)',
    runtime: 'bun',
    about: 'The same dist/server/server.mjs, unchanged, run by Bun instead of Node.',
    command: () => [BUN, join(DIST, 'server/server.mjs')],
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    name: 'stock',
    criticalCss: 'AngularNodeAppEngine with the plans its build compiled',
    label: 'stock (ng new --ssr: Express 5 + AngularNodeAppEngine)',
    runtime: 'node',
    about:
      'The server.ts `ng new --ssr` generates in Angular 22.2, verbatim (bench/variants/stock/server.ts), built with the same app by the bench-stock configuration.',
    command: () => node(join(STOCK_DIST, 'server/server.mjs')),
    env: COMMON_ENV,
    dist: STOCK_DIST,
  },
  {
    name: 'express-commonengine',
    peer: true,
    criticalCss: BEASTIES_PER_RENDER,
    label: 'express-commonengine (Express 5 + express.static + CommonEngine)',
    runtime: 'node',
    about:
      "The reference article's starting point: Express + express.static + CommonEngine + res.send (default ETag on).",
    command: () => node(join(VARIANTS_DIR, 'express-commonengine.mjs')),
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    name: 'fastify',
    peer: true,
    criticalCss: BEASTIES_PER_RENDER,
    label: 'fastify (Fastify 5 + @fastify/static + CommonEngine)',
    runtime: 'node',
    about:
      'Fastify 5 + @fastify/static (default options, 1-year max-age) + CommonEngine from the not-found handler.',
    command: () => node(join(VARIANTS_DIR, 'fastify.mjs')),
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    name: 'bun-elysia',
    peer: true,
    criticalCss: BEASTIES_PER_RENDER,
    label: 'bun-elysia (Bun + Elysia + @elysiajs/static + CommonEngine)',
    runtime: 'bun',
    about:
      "The article's fastest: Bun + Elysia + @elysiajs/static (alwaysStatic) + CommonEngine, weak ETag from the etag package.",
    command: () => [BUN, join(VARIANTS_DIR, 'bun-elysia.mjs')],
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    name: 'ceiling',
    peer: true,
    criticalCss: "the origin's compiled stylesheets (server/pages/critical-css.ts), as the origin",
    label: 'ceiling (node:http from memory; CommonEngine for SSR)',
    runtime: 'node',
    about:
      'The physical limit: node:http answering every file from a Buffer with a fixed ETag; node:http + CommonEngine (same render options as origin) for rendered pages.',
    command: () => node(join(VARIANTS_DIR, 'ceiling.mjs')),
    env: COMMON_ENV,
    dist: DIST,
  },
];

// Ablations: the origin with one optimization turned off through its own settings, to measure what
// that optimization is worth. Not in the default run (--variants origin,origin-disk,… to add them).
const ORIGIN = VARIANTS[0];
VARIANTS.push(
  {
    ...ORIGIN,
    name: 'origin-disk',
    ablation: true,
    label: 'origin-disk (ablation: STATIC_MEMORY_BYTES=0, every file through koa-static)',
    about:
      'The origin with its in-memory file index off: koa-static streams every file and prerendered page from disk.',
    env: { ...COMMON_ENV, STATIC_MEMORY_BYTES: '0' },
  },
  {
    ...ORIGIN,
    name: 'origin-beasties',
    ablation: true,
    criticalCss: BEASTIES_PER_RENDER,
    label: 'origin-beasties (ablation: CRITICAL_CSS=per-request)',
    about:
      "The origin with CommonEngine's per-request Beasties pass instead of compiled stylesheets.",
    env: { ...COMMON_ENV, CRITICAL_CSS: 'per-request' },
  },
  {
    name: 'koa-floor',
    peer: true,
    ablation: true,
    criticalCss: "the origin's compiled stylesheets (server/pages/critical-css.ts), as the origin",
    label: 'koa-floor (reference: the ceiling inside one bare Koa middleware)',
    runtime: 'node',
    about:
      "What Koa itself costs: the ceiling's work in a single Koa middleware, with nothing of the origin's steps.",
    command: () => node(join(VARIANTS_DIR, 'koa-floor.mjs')),
    env: COMMON_ENV,
    dist: DIST,
  },
  {
    ...ORIGIN,
    name: 'origin-accesslog',
    ablation: true,
    label: 'origin-accesslog (ACCESS_LOG=true: a JSON line per request)',
    about: 'The origin with its optional access log on, to show what the log costs.',
    env: { ...COMMON_ENV, ACCESS_LOG: 'true' },
  },
  {
    ...ORIGIN,
    name: 'origin-koa',
    ablation: true,
    label: 'origin-koa (ablation: FAST_PATH=false, every request through Koa)',
    about:
      'The origin without its step 0: files and prerendered pages held in memory are answered by the Koa chain.',
    env: { ...COMMON_ENV, FAST_PATH: 'false' },
  },
  {
    ...ORIGIN,
    name: 'origin-csp',
    ablation: true,
    label: 'origin-csp (CSP=strict: a fresh nonce spliced into every HTML answer)',
    about:
      'The origin with its Content-Security-Policy on: each HTML answer (prerendered, cached or rendered) gets a fresh nonce in its header and its tags.',
    env: { ...COMMON_ENV, CSP: 'strict' },
  },
  {
    ...ORIGIN,
    name: 'origin-traced',
    ablation: true,
    label:
      'origin-traced (OTEL_EXPORTER_OTLP_ENDPOINT set, the default sampler: every request traced)',
    about:
      "The origin exporting a trace of every request (the specification's default sampler, parentbased_always_on) to an OTLP endpoint in the bench's process.",
    get env() {
      return { ...COMMON_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: traceSink() };
    },
  },
  {
    ...ORIGIN,
    name: 'origin-traced-0',
    ablation: true,
    label: 'origin-traced-0 (tracing on, OTEL_TRACES_SAMPLER_ARG=0: every request left out)',
    about:
      'The origin with tracing on and a sampler that leaves every request out (parentbased_traceidratio, 0): what a request the sampler does not pick costs.',
    get env() {
      return {
        ...COMMON_ENV,
        OTEL_EXPORTER_OTLP_ENDPOINT: traceSink(),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
      };
    },
  },
  {
    ...ORIGIN,
    name: 'origin-traced-10',
    ablation: true,
    label:
      'origin-traced-10 (tracing with OTEL_TRACES_SAMPLER_ARG=0.1: one request in ten recorded)',
    about:
      'The origin tracing one request in ten (parentbased_traceidratio, 0.1), the sampler docs/observability.md suggests for production.',
    get env() {
      return {
        ...COMMON_ENV,
        OTEL_EXPORTER_OTLP_ENDPOINT: traceSink(),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      };
    },
  },
  {
    ...ORIGIN,
    name: 'origin-metrics',
    ablation: true,
    label: 'origin-metrics (METRICS_PORT set: Prometheus histograms observed on every response)',
    about:
      'The origin with its Prometheus endpoint on: each response and render is timed into a histogram.',
    env: { ...COMMON_ENV, METRICS_PORT: '0' },
  },
);

/**
 * `--baseline DIR`: the origin of another build of this project (main before a change, a release),
 * run beside this one in the same interleaved rounds, so a change is read as a ratio of one run.
 * The other build must serve the same app (bench/run.mjs compares the browser builds).
 * @param {string} dir a build's output folder (with server/server.mjs and browser/)
 * @returns {Variant}
 */
export function baselineVariant(dir) {
  return {
    ...ORIGIN,
    name: 'baseline',
    label: `baseline (this project's origin from another build: ${dir})`,
    about: `The origin of another build (${dir}), run as users run it, beside this one: what a change does.`,
    command: () => node(join(dir, 'server/server.mjs')),
    dist: dir,
  };
}

export const VARIANT_NAMES = VARIANTS.map((variant) => variant.name);
/** What `npm run bench` runs without --variants: everything but the ablations. */
export const DEFAULT_VARIANT_NAMES = VARIANTS.filter((variant) => !variant.ablation).map(
  (variant) => variant.name,
);
/** Any line saying it listens: each server prints one when it is ready. */
export const READY_LINE = /listening on https?:\/\//i;

/**
 * The environment a variant starts with. origin-cluster gets one worker per CPU the servers are
 * pinned to, and at least 2, so that even on one pinned CPU it is a cluster (and shows its cost).
 * @param {Variant} variant
 * @param {number} serverCpus
 */
export function variantEnv(variant, serverCpus) {
  return variant.workersPerCpu
    ? { ...variant.env, WORKERS: String(Math.max(2, serverCpus)) }
    : variant.env;
}

/** Makes `baseline` a variant of this run (`--baseline DIR`). @param {string} dir */
export function addBaseline(dir) {
  if (!VARIANTS.some((variant) => variant.name === 'baseline')) VARIANTS.push(baselineVariant(dir));
}

/** @param {string} name */
export function getVariant(name) {
  const variant = VARIANTS.find((candidate) => candidate.name === name);
  if (!variant) throw new Error(`unknown variant "${name}" (known: ${VARIANT_NAMES.join(', ')})`);
  return variant;
}

/** Where the traced variants export: the sink bench/run.mjs starts when one of them runs. */
function traceSink() {
  const url = process.env.BENCH_OTLP_SINK;
  if (url === undefined) {
    throw new Error(
      'the traced variants need the OTLP sink bench/run.mjs starts (BENCH_OTLP_SINK)',
    );
  }
  return url;
}
