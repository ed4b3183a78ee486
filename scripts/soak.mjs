// `npm run soak`: a long, bounded run of the production origin over loopback, to watch memory.
// Phase 1 sends mixed traffic for --minutes; phase 2 floods --flood unique URLs. RSS is sampled
// every second and reported as a curve. Usage: npm run soak -- [--minutes 3] [--flood 100000]
// [--update-readme] (writes the summary into docs/reliability.md between <!-- soak:start --> and <!-- soak:end -->)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readdirSync } from 'node:fs';
import { load, sampleRss } from './lib/load.mjs';
import { startOrigin } from './lib/origin-process.mjs';
import { APP_DIST as DIST, ROOT } from './lib/paths.mjs';
import { readLoadPaths } from './lib/load-paths.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    flood: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '50' },
    'update-readme': { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const flood = Number(values.flood);
const connections = Number(values.connections);
const MB = 1024 * 1024;

const files = readdirSync(join(DIST, 'browser'));
const css = `/${files.find((name) => /^styles-.+\.css$/.test(name))}`;
const js = `/${files.find((name) => /^main-.+\.js$/.test(name))}`;

// The app's pages (load-paths.json); a page it does not name is left out of the mix.
const paths = readLoadPaths();
const rendered = paths.rendered;
const popular = (n) => rendered.at(n % 5000);
// What browsers ask for: pages (prerendered, rendered, client-only, unknown), then their assets.
const mixed = [
  () => paths.prerendered,
  ...(rendered ? [popular] : []),
  () => css,
  () => js,
  ...(paths.clientOnly ? [() => paths.clientOnly] : []),
  ...(rendered ? [popular] : []),
  () => css,
  () => js,
  (n) => `/no-such-page-${n % 100}`,
  () => '/favicon.ico',
];
// Every URL different: half of them rendered (distinct ids, unknown pages).
const unique = [
  // With a cached route, this fills the render cache to its bound.
  rendered ? (n) => rendered.at(n) : (n) => `/no-such-page-${n}/x`,
  (n) => `/missing-${n}.js`,
  (n) => `/no-such-page-${n}`,
  (n) => `${paths.prerendered}?u=${n}`,
];

const origin = await startOrigin({ dist: DIST, env: { HOST: '127.0.0.1' } });
console.log(
  `origin pid ${origin.pid} on ${origin.url}; ${minutes} min mixed traffic, then ${flood} unique URLs`,
);
const stop = sampleRss(origin.pid, 1000);
const started = Date.now();
const phases = [];
let samples;
try {
  const first = await load({
    url: origin.url,
    connections,
    duration: Math.round(minutes * 60),
    path: (n) => mixed[n % mixed.length](n),
  });
  phases.push({ name: 'mixed', ...summarize(first) });
  console.log('mixed:', JSON.stringify(phases.at(-1)));
  const second = await load({
    url: origin.url,
    connections,
    amount: flood,
    path: (n) => unique[n % unique.length](n),
  });
  phases.push({ name: 'unique URLs', ...summarize(second) });
  console.log('unique URLs:', JSON.stringify(phases.at(-1)));
} finally {
  samples = stop();
  await origin.stop();
}

function summarize({ result, statuses, sent }) {
  const fiveXX = Object.entries(statuses)
    .filter(([code]) => code.startsWith('5'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    sent,
    errors: result.errors,
    timeouts: result.timeouts,
    '5xx': fiveXX,
    statuses,
    reqPerSec: Math.round(result.requests.average),
  };
}

const rssMb = samples.map((bytes) => Math.round(bytes / MB));
const report = {
  date: new Date().toISOString(),
  node: process.version,
  seconds: Math.round((Date.now() - started) / 1000),
  connections,
  phases,
  rssMb: { start: rssMb[0], end: rssMb.at(-1), peak: Math.max(...rssMb), everySecond: rssMb },
};
const outDir = join(ROOT, 'bench/results');
mkdirSync(outDir, { recursive: true });
const file = join(outDir, `soak-${report.date.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify(report, null, 2));

const total = phases.reduce(
  (sum, phase) => ({
    sent: sum.sent + phase.sent,
    errors: sum.errors + phase.errors,
    fiveXX: sum.fiveXX + phase['5xx'],
  }),
  { sent: 0, errors: 0, fiveXX: 0 },
);
const step = Math.max(1, Math.floor(rssMb.length / 20));
const summary = [
  ...phases.map(
    (phase) =>
      `${phase.name}: ${phase.sent} requests, ${phase.errors} errors, ${phase['5xx']} 5xx, statuses ${JSON.stringify(phase.statuses)}, ${phase.reqPerSec} req/s`,
  ),
  `requests sent: ${total.sent}, errors: ${total.errors}, 5xx: ${total.fiveXX}`,
  `RSS start ${report.rssMb.start} MB, end ${report.rssMb.end} MB, peak ${report.rssMb.peak} MB`,
  `RSS every ${step} s (MB): ${rssMb.filter((_, i) => i % step === 0).join(' ')}`,
];
console.log(`\n${summary.join('\n')}`);
console.log(`written: ${file}`);
if (values['update-readme']) {
  const readme = join(ROOT, 'docs/reliability.md');
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf('<!-- soak:start -->');
  const end = text.indexOf('<!-- soak:end -->');
  const block = [
    '<!-- soak:start -->',
    `Output of \`npm run soak -- --minutes ${minutes} --flood ${flood} --update-readme\`, ${report.date} (Node ${report.node}, ${connections} connections, ${report.seconds} s; written by the script):`,
    '',
    '```',
    ...summary,
    '```',
    '',
  ].join('\n');
  writeFileSync(readme, text.slice(0, start) + block + text.slice(end));
  console.log('docs/reliability.md: soak summary updated');
}
if (total.errors > 0) {
  process.exitCode = 1;
}
