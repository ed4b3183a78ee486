// `npm run profile:gc -- [--renders 300]`: what the garbage collector costs a render. Renders
// product pages one at a time in a child process (no HTTP, no other work) under --trace-gc-nvp and
// prints the CPU per render, the collector's share of it, and how much of a render that has ended
// a scavenge still finds alive. The origin's renders are this same code (bench/README.md). Run it
// under `taskset -c 1` to see the collector's helper threads share one CPU with the render, as in the bench.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { readBuildDirs } from '../server/locales/build-layout.ts';
import { serveAppApiOf } from './lib/app-api.mjs';
import { readLoadPaths } from './lib/load-paths.mjs';
import { median } from './lib/median.mjs';
import { APP_DIST } from './lib/paths.mjs';

// load-paths.json's page rendered per request, the bench's ssr rotation (else its prerendered page).
const paths = readLoadPaths();
const pathAt = (k) => (paths.rendered ? paths.rendered.at(k) : paths.prerendered);
const pattern = paths.rendered ? paths.rendered.path.replace(/\{\w+\}/, 'N') : paths.prerendered;

const { values } = parseArgs({
  options: {
    renders: { type: 'string', default: '300' },
    child: { type: 'boolean', default: false },
  },
});
const renders = Number(values.renders);
if (!Number.isInteger(renders) || renders < 1) {
  console.error('profile:gc: --renders needs a positive integer');
  process.exit(2);
}

if (values.child) {
  await measure();
} else {
  await report();
}

/** The child: warm up, render `renders` pages, then check what survives after a render ends. */
async function measure() {
  const { renderInProcess } = await import('./lib/render-in-process.mjs');
  let k = 0;
  // The bench's ssr rotation: a different page on every render.
  const render = () => renderInProcess(pathAt(k++));
  for (let i = 0; i < 100; i++) await render();
  globalThis.gc();
  console.log('#start');
  const cpu = process.cpuUsage();
  const mainThread = process.threadCpuUsage();
  for (let i = 0; i < renders; i++) await render();
  const total = process.cpuUsage(cpu);
  const main = process.threadCpuUsage(mainThread);
  console.log(`#end ${(total.user + total.system) / 1000} ${(main.user + main.system) / 1000}`);

  // After a render has ended (nothing in flight), two scavenges: what the second moves to the old
  // generation was still reachable to the scavenger twice, though a full GC frees it (bench/README.md).
  const oldGeneration = () =>
    v8
      .getHeapSpaceStatistics()
      .filter(({ space_name }) => !space_name.startsWith('new'))
      .reduce((sum, space) => sum + space.space_used_size, 0);
  const promoted = [];
  for (let i = 0; i < 5; i++) {
    await render();
    await new Promise((resolve) => setTimeout(resolve, 20));
    /x/.exec(`x${i}`); // the last RegExp match keeps its subject alive: make it a tiny one
    globalThis.gc({ type: 'minor' });
    const before = oldGeneration();
    globalThis.gc({ type: 'minor' });
    promoted.push(oldGeneration() - before);
  }
  const beforeFull = v8.getHeapStatistics().used_heap_size;
  globalThis.gc();
  console.log(
    `#survivors ${promoted.join(' ')} ${beforeFull - v8.getHeapStatistics().used_heap_size}`,
  );
}

/**
 * The parent: runs the child with the collector's trace on and sums the trace over the measured
 * renders. Renders of pages made of data fetch the app's API: served here, outside the measured
 * process, as a remote API is.
 */
async function report() {
  const api = await serveAppApiOf((await readBuildDirs(APP_DIST)).locales[0].serverDir);
  try {
    await measureAndReport(api && { API_URL: api.url });
  } finally {
    await api?.close();
  }
}

/** @param {Record<string, string> | undefined} env */
async function measureAndReport(env) {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--trace-gc-nvp',
      import.meta.filename,
      '--child',
      '--renders',
      String(renders),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) {
    throw new Error(`the rendering process exited with code ${code}`);
  }
  const measured = out.slice(out.indexOf('#start'), out.indexOf('#end'));
  const [, totalMs, mainMs] = out.match(/#end ([\d.]+) ([\d.]+)/).map(Number);
  const survivors = out
    .match(/#survivors ([\d ]+)/)[1]
    .split(' ')
    .map(Number);
  const fields = (line) =>
    Object.fromEntries(
      line
        .split(/\s+/)
        .filter((part) => part.includes('='))
        .map((part) => part.split('=')),
    );
  const events = measured
    .split('\n')
    .filter((line) => line.includes(' pause='))
    .map(fields);
  const scavenges = events.filter((event) => event.gc === 's');
  const fullGcs = events.filter((event) => event.gc === 'mc');
  const sum = (list, name) => list.reduce((total, event) => total + Number(event[name] ?? 0), 0);
  const perRender = (ms) => `${(ms / renders).toFixed(2)} ms`;
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

  console.log(
    `${renders} renders of ${pattern} in one process, one at a time (Node ${process.version}, ${availableParallelism()} CPU(s) for its threads):`,
  );
  console.log(
    `  CPU per render:  ${perRender(totalMs)} (main thread ${perRender(mainMs)}, other threads ${perRender(totalMs - mainMs)})`,
  );
  if (scavenges.length > 0) {
    console.log(
      `  scavenges:       ${scavenges.length} (one per ${Math.round(renders / scavenges.length)} renders), ` +
        `${mb(sum(scavenges, 'promoted') / scavenges.length)} promoted each of ${mb(sum(scavenges, 'allocated') / scavenges.length)} allocated`,
    );
    console.log(
      `                   main-thread pause ${perRender(sum(scavenges, 'pause'))} per render, ` +
        `helper threads ${perRender(sum(scavenges, 'background.scavenge.parallel'))} per render`,
    );
  }
  console.log(
    `  full GCs:        ${fullGcs.length}, main-thread pause ${perRender(sum(fullGcs, 'pause'))} per render`,
  );
  console.log(
    `  after a render ended, a second scavenge still promoted ${(median(survivors.slice(0, -1)) / 1024).toFixed(0)} KB of it ` +
      `(median of ${survivors.length - 1}); a full GC then freed ${(survivors.at(-1) / 1024).toFixed(0)} KB of garbage in all`,
  );
}
