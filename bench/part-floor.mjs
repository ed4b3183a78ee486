// `node bench/part-floor.mjs`: what rendering a visitor's personal part costs at the least (issue
// 56). renderPart starts an Angular application for every render, so a part can cost no less than
// a bare one: a platform-server `renderApplication` of an empty standalone component, the floor.
// In one process, in interleaved rounds (each kind in turn, a Williams order), the CPU time of this
// process per call, one call at a time, of:
// - `bare`: renderApplication of an empty component (Angular from node_modules, compiled JIT once,
//   with ngDevMode off as in a production build);
// - `empty part`: the app's renderPart (dist/server/main.server.mjs) asked for no part: its
//   bootstrap with the app's config for parts, nothing in it;
// - `part`: renderPart of the first part the app declares (the demo's greeting) for one visitor,
//   whose API calls (the demo's /api/me and /api/cart) go to the app's API served by a child
//   process, as the bench serves it, so that its CPU is not counted here;
// - `page`: a full CommonEngine render of a page of load-paths.json's rendered route, with the
//   origin's options (critical CSS compiled once), what the stock server does per request.
// Then the medians of the rounds and their ratios. Bounded: --seconds (default 30) for the whole.
// `--json` ends the output with one line of JSON (the bench's ssr-personal reads it).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { appApiOf, serveAppApi } from '../scripts/lib/app-api.mjs';
import { median } from '../scripts/lib/median.mjs';
import { roundOrder } from './lib/round-order.mjs';

// The child that serves the app's API: its answers' CPU is the API's, not the render's.
if (process.argv[2] === '--serve-api') {
  const served = await serveAppApi(await appApiOf(process.argv[3]));
  process.send?.(served.url);
  process.on('disconnect', () => process.exit(0));
} else {
  await main().catch((error) => {
    console.error(`part-floor failed: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '30' },
      rounds: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (!(seconds > 0) || !Number.isInteger(rounds) || rounds < 1)
    throw new Error('--seconds must be a positive number, --rounds a whole number ≥ 1');

  // What the bench's variants render with: the app's bundle, the origin's options (in-memory.mjs).
  const { serverDistFolder } = await import('./variants/app-bundle.mjs');
  const { renderPage } = await import('./variants/in-memory.mjs');
  const { renderedPathAt, PATHS } = await import('./lib/scenarios.mjs');
  const bundle = await import(pathToFileURL(join(serverDistFolder, 'main.server.mjs')).href);
  const [partName] = Object.keys(bundle.personalParts ?? {});
  if (typeof bundle.renderPart !== 'function' || partName === undefined)
    throw new Error(`${serverDistFolder}/main.server.mjs exports no renderPart, or no part`);

  const api = fork(import.meta.filename, ['--serve-api', serverDistFolder], { stdio: 'inherit' });
  // However this process ends, the API's goes with it.
  process.on('exit', () => api.kill());
  const [apiUrl] = await once(api, 'message');
  process.env.API_URL = apiUrl;

  // Angular from node_modules, as a production build runs it (the bundle's was built so).
  globalThis.ngDevMode = false;
  await import('@angular/compiler');
  const { Component, provideZonelessChangeDetection } = await import('@angular/core');
  const { bootstrapApplication } = await import('@angular/platform-browser');
  const { provideServerRendering, renderApplication } = await import('@angular/platform-server');
  const Empty = Component({ selector: 'app-empty', template: '' })(class {});
  const bareBootstrap = (context) =>
    bootstrapApplication(
      Empty,
      { providers: [provideZonelessChangeDetection(), provideServerRendering()] },
      context,
    );
  const BARE_DOCUMENT = '<html><head></head><body><app-empty></app-empty></body></html>';

  const path = renderedPathAt(0);
  const url = `http://localhost${path}`;
  const cookie = PATHS.personal?.cookie ?? 'sid';
  const sid = 'v000floor';
  const partInput = (parts) => ({
    parts,
    url,
    request: new Request(url, { headers: { cookie: `${cookie}=${sid}` } }),
    context: { renderInputs: { cookie: (name) => (name === cookie ? sid : undefined) } },
  });
  // The part's inputs as the page gives them: the demo's greeting takes the product's id.
  const inputs = { product: Number(path.split('/').pop()) || 1 };
  const KINDS = [
    {
      name: 'bare',
      run: () =>
        renderApplication(bareBootstrap, {
          document: BARE_DOCUMENT,
          url,
          allowedHosts: ['localhost'],
        }),
    },
    { name: 'empty part', run: () => bundle.renderPart(partInput([])) },
    { name: 'part', run: () => bundle.renderPart(partInput([{ name: partName, inputs }])) },
    { name: 'page', run: () => renderPage(url) },
  ];

  // One of each first: a part that does not render its visitor is no floor of anything.
  const shown = await bundle.renderPart(partInput([{ name: partName, inputs }]));
  const expected = PATHS.personal?.shows(sid);
  if (expected && !shown.parts[0]?.includes(expected))
    throw new Error(`renderPart did not render "${expected}": ${shown.parts[0]?.slice(0, 300)}`);

  /** Calls `run` one after another for `ms`; CPU and wall µs per call. */
  const measure = async (run, ms) => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    let calls = 0;
    while (performance.now() - start < ms || calls === 0) {
      await run();
      calls++;
    }
    const used = process.cpuUsage(cpu);
    return {
      calls,
      cpuUs: (used.user + used.system) / calls,
      wallUs: ((performance.now() - start) * 1000) / calls,
    };
  };
  // A fifth of the time warms each kind up (the JIT settles over thousands of renders), the rest
  // is split between the rounds.
  const warmMs = (seconds * 1000 * 0.2) / KINDS.length;
  const sliceMs = (seconds * 1000 * 0.8) / KINDS.length / rounds;
  for (const kind of KINDS) await measure(kind.run, warmMs);
  const samples = new Map(KINDS.map((kind) => [kind.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const kind of roundOrder(KINDS, round)) {
      samples.get(kind.name).push(await measure(kind.run, sliceMs));
    }
  }
  api.disconnect();

  const result = Object.fromEntries(
    KINDS.map(({ name }) => {
      const runs = samples.get(name);
      return [
        name,
        {
          cpuUs: median(runs.map((run) => run.cpuUs)),
          wallUs: median(runs.map((run) => run.wallUs)),
          calls: runs.reduce((sum, run) => sum + run.calls, 0),
        },
      ];
    }),
  );
  const ratio = (top, bottom) => result[top].cpuUs / result[bottom].cpuUs;
  const ratios = {
    'empty part ÷ bare': ratio('empty part', 'bare'),
    'part ÷ bare': ratio('part', 'bare'),
    'page ÷ part': ratio('page', 'part'),
    'page ÷ bare': ratio('page', 'bare'),
  };
  const us = (value) => Math.round(value).toLocaleString('en-US');
  console.log(
    `Part floor on ${path} (part "${partName}"), ${rounds} interleaved rounds, medians, one call at a time:`,
  );
  for (const { name } of KINDS) {
    const { cpuUs, wallUs, calls } = result[name];
    console.log(
      `  ${name.padEnd(10)} ${us(cpuUs).padStart(7)} µs CPU, ${us(wallUs).padStart(7)} µs wall per call (${calls} calls)`,
    );
  }
  for (const [name, value] of Object.entries(ratios))
    console.log(`  ${name}: ${value.toFixed(2)}×`);
  if (values.json) console.log(JSON.stringify({ path, part: partName, rounds, result, ratios }));
}
