// `npm run profile -- [--path /products/N] [--seconds 10] [--connections 50] [--revalidate]`: runs the production
// origin under Node's CPU profiler (--cpu-prof) while autocannon loads one URL pattern over loopback
// (N becomes a rotating id; the default is load-paths.json's rendered page, else its prerendered
// one), then prints where the time went. Open the written
// .cpuprofile in Chrome DevTools (Performance > Load profile) or https://www.speedscope.app.
// It also prints the garbage collector's pauses during the load (--trace-gc): the CPU profile
// shows the collector's own thread time, not how long it stopped the requests.
import { readdirSync, readFileSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from './lib/http.mjs';
import { load } from './lib/load.mjs';
import { startOrigin } from './lib/origin-process.mjs';
import { APP_DIST, ROOT } from './lib/paths.mjs';
import { readLoadPaths } from './lib/load-paths.mjs';

const { values } = parseArgs({
  options: {
    path: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    top: { type: 'string', default: '25' },
    revalidate: { type: 'boolean', default: false },
  },
});
const paths = readLoadPaths();
values.path ??= paths.rendered ? paths.rendered.path.replace(/\{\w+\}/, 'N') : paths.prerendered;
const dir = join(ROOT, 'profiles');
mkdirSync(dir, { recursive: true });
const before = new Set(readdirSync(dir));

const origin = await startOrigin({
  dist: APP_DIST,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--trace-gc'],
});
// --revalidate: ask with the ETag the origin gave, as a browser revalidating its copy does (304s).
const etag = values.revalidate
  ? (await request(origin.url, values.path.replace('N', '1'))).headers.etag
  : undefined;
console.log(
  `profiling ${origin.url}${values.path} for ${values.seconds} s with ${values.connections} connections…`,
);
const gcFrom = origin.stdout().length;
const { result, statuses } = await load({
  url: origin.url,
  connections: Number(values.connections),
  duration: Number(values.seconds),
  path: (n) =>
    values.path.replace(
      'N',
      paths.rendered
        ? paths.rendered.valueAt(n % Math.min(50_000, paths.rendered.count))
        : String((n % 50_000) + 1),
    ),
  headers: etag ? { 'if-none-match': etag } : undefined,
});
const gcLines = origin.stdout().slice(gcFrom);
await origin.stop(); // SIGTERM: the origin drains and exits, and Node writes the profile
console.log(`${Math.round(result.requests.average)} req/s, statuses ${JSON.stringify(statuses)}`);

const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile') && !before.has(name));
if (!file) {
  throw new Error('no profile was written');
}
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const interval = (profile.endTime - profile.startTime) / profile.samples.length;
const self = new Map();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    ? `${relative(ROOT, url.replace('file://', ''))}:${lineNumber + 1}`
    : '(native)';
  const key = `${functionName || '(anonymous)'} ${where}`;
  self.set(key, (self.get(key) ?? 0) + node.hitCount);
}
const total = profile.samples.length;
console.log(
  `\nTop ${values.top} functions by self time (${total} samples, ${(interval / 1000).toFixed(2)} ms each):`,
);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
}
// The same samples by area: how much is the render, how much the server around it.
const AREAS = [
  ['Angular app bundle (the render)', (url) => /dist\/server\/(main\.server|chunk-)/.test(url)],
  ['origin (dist/server/server.mjs)', (url) => /dist\/server\/server\.mjs/.test(url)],
  ['critical CSS (beasties)', (url) => /node_modules\/beasties\//.test(url)],
  [
    'Koa stack and its helpers',
    (url) =>
      /node_modules\/(koa|@koa|koa-[^/]+|fresh|pino|mime-types|on-finished|delegates)\//.test(url),
  ],
  ['Node core (http, buffers, url)', (url) => url.startsWith('node:')],
];
const areas = new Map();
for (const node of profile.nodes) {
  const { functionName, url } = node.callFrame;
  const area =
    AREAS.find(([, test]) => test(url))?.[0] ??
    (functionName === '(garbage collector)'
      ? 'garbage collector'
      : functionName === '(idle)'
        ? 'idle'
        : 'native and other');
  areas.set(area, (areas.get(area) ?? 0) + node.hitCount);
}
console.log('\nBy area:');
for (const [area, hits] of [...areas].sort((a, b) => b[1] - a[1])) {
  console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${area}`);
}
printGcPauses(gcLines, Number(values.seconds));
console.log(`\nprofile: ${relative(ROOT, join(dir, file))}`);

/** Pauses per kind of collection from V8's --trace-gc lines ("Scavenge 108.1 (213.4) -> 69.0 (209.6) MB, …, 28.47 / 0.00 ms"). */
function printGcPauses(text, seconds) {
  const pauses = new Map();
  for (const [, kind, ms] of text.matchAll(
    /: (Scavenge|Mark-Compact|Minor Mark-Sweep)\b.*? ([\d.]+) \/ [\d.]+ ms/g,
  )) {
    if (!pauses.has(kind)) pauses.set(kind, []);
    pauses.get(kind).push(Number(ms));
  }
  console.log('\nGarbage collector pauses during the load (the main thread stopped):');
  if (pauses.size === 0) {
    console.log('  none reported');
    return;
  }
  let total = 0;
  for (const [kind, list] of pauses) {
    list.sort((a, b) => a - b);
    total += list.reduce((sum, ms) => sum + ms, 0);
    const at = (share) =>
      list[Math.min(list.length - 1, Math.floor(share * list.length))].toFixed(1);
    console.log(
      `  ${kind}: ${list.length} (${(list.length / seconds).toFixed(1)}/s), median ${at(0.5)} ms, max ${at(1)} ms`,
    );
  }
  console.log(
    `  ${Math.round(total)} ms paused in ${seconds} s: ${((100 * total) / (seconds * 1000)).toFixed(1)}% of the time`,
  );
}
