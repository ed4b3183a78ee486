// `npm run bench:patches`: what each patch in patches/ saves, per call, against its unpatched twin
// (the same package with the patch reversed). Interleaved rounds, medians, one process.
import '@angular/compiler';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CommonEngine as PatchedEngine } from '@angular/ssr/node';
import { median } from '../scripts/lib/median.mjs';
import { APP_DIST as DIST, ROOT } from '../scripts/lib/paths.mjs';
import { pristinePackage } from '../scripts/lib/pristine-package.mjs';

// Resolved as the workspace's files are, to the patched copies in node_modules: not from bench/,
// whose own node_modules (the peers, bench/package.json) has an Express 5's content-type 2.
const require = createRequire(join(ROOT, 'package.json'));
const ROUNDS = Number(process.env['ROUNDS'] ?? 7);
const ROUND_MS = Number(process.env['ROUND_MS'] ?? 300);

const publicPath = join(DIST, 'browser');
const documentFilePath = join(DIST, 'server/index.server.html');
const { CommonEngine: OriginalEngine } = await import(
  join(pristinePackage('@angular/ssr'), 'fesm2022/node.mjs')
);

function koaContext(Koa) {
  const req = new IncomingMessage(new Socket());
  return new Koa().createContext(req, new ServerResponse(req));
}

function ssgLookup(Engine, path) {
  const engine = new Engine();
  let n = 0;
  return () =>
    engine.retrieveSSGPage({
      publicPath,
      documentFilePath,
      url: `http://localhost${path.replace('N', String(n++ % 5000))}`,
    });
}

const patches = [
  {
    patch: 'content-type',
    what: "parse('text/html; charset=utf-8')",
    original: () => {
      const { parse } = require(pristinePackage('content-type'));
      return () => parse('text/html; charset=utf-8');
    },
    patched: () => {
      const { parse } = require('content-type');
      return () => parse('text/html; charset=utf-8');
    },
  },
  {
    patch: 'koa',
    what: "ctx.type = 'html'",
    original: () => {
      const ctx = koaContext(require(pristinePackage('koa')));
      return () => {
        ctx.type = 'html';
      };
    },
    patched: () => {
      const ctx = koaContext(require('koa'));
      return () => {
        ctx.type = 'html';
      };
    },
  },
  {
    patch: '@angular/ssr',
    what: 'CommonEngine prerendered-page lookup, URL not prerendered',
    original: () => ssgLookup(OriginalEngine, '/products/N'),
    patched: () => ssgLookup(PatchedEngine, '/products/N'),
  },
  {
    patch: '@angular/ssr',
    what: 'CommonEngine prerendered-page lookup, prerendered /',
    original: () => ssgLookup(OriginalEngine, '/'),
    patched: () => ssgLookup(PatchedEngine, '/'),
  },
];

/** Calls `fn` for about ROUND_MS and returns nanoseconds per call (awaiting it when it is async). */
async function time(fn, batch = 100) {
  const probe = fn();
  const isAsync = probe && typeof probe.then === 'function';
  if (isAsync) await probe;
  let calls = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ROUND_MS) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < batch; i++) {
      if (isAsync) await fn();
      else fn();
    }
    calls += batch;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

const results = [];
for (const entry of patches) {
  const runners = { original: entry.original(), patched: entry.patched() };
  const samples = { original: [], patched: [] };
  await time(runners.original, entry.batch);
  await time(runners.patched, entry.batch);
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 ? ['patched', 'original'] : ['original', 'patched']) {
      samples[name].push(await time(runners[name], entry.batch));
    }
  }
  const row = {
    patch: entry.patch,
    what: entry.what,
    originalNs: median(samples.original),
    patchedNs: median(samples.patched),
  };
  row.speedup = row.originalNs / row.patchedNs;
  results.push(row);
  process.stdout.write('.');
}
process.stdout.write('\n');

const format = (ns) =>
  ns >= 1e6
    ? `${(ns / 1e6).toFixed(2)} ms`
    : ns >= 1000
      ? `${(ns / 1000).toFixed(1)} µs`
      : `${ns.toFixed(0)} ns`;
const lines = [
  `Measured ${new Date().toISOString()} on ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}; ` +
    `${ROUNDS} interleaved rounds of ${ROUND_MS} ms, medians.`,
  '',
  '| patch | per call | original | patched | speed-up |',
  '|---|---|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| \`${r.patch}\` | ${r.what} | ${format(r.originalNs)} | ${format(r.patchedNs)} | ${r.speedup.toFixed(1)}× |`,
  ),
];
console.log(lines.join('\n'));
const outDir = join(ROOT, 'bench/results');
mkdirSync(outDir, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(
  join(outDir, `patches-${stamp}.json`),
  JSON.stringify({ rounds: ROUNDS, roundMs: ROUND_MS, node: process.version, results }, null, 2),
);
writeFileSync(join(outDir, `patches-${stamp}.md`), lines.join('\n') + '\n');
if (process.argv.includes('--update-readme')) {
  const readme = join(ROOT, 'patches/README.md');
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf('<!-- patches:start -->');
  const end = text.indexOf('<!-- patches:end -->');
  writeFileSync(
    readme,
    `${text.slice(0, start)}<!-- patches:start -->\n${lines.join('\n')}\n${text.slice(end)}`,
  );
  console.log('patches/README.md updated');
}
