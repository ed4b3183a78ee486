// The `ssr-personal` scenario: pages with a personal part (the demo's greeting and cart count)
// asked for by signed-in visitors. Its figures compare ways of loading the same servers with one
// another (returning visitors against the anonymous page, new visitors against a private route), so
// it does not fit the variant × scenario grid: like ssr-shared, it starts its own processes, an
// origin and the stock server, and runs its setups once per round, after the variants' scenarios of
// that round, in a Williams order that changes per round:
// - anonymous: the origin's pages without the cookie, the shared cached page;
// - returning: the same pages, each with its visitor's cookie, a few pages per visitor, over and
//   over: each visitor's part kept for them (its maxAge) and answered from there;
// - new: the same pages with a new visitor on every request: every part rendered;
// - private: the origin's private page (load-paths.json's personal.private), rendered per request;
// - stock: the stock server asked for the returning visitors' pages, each rendered whole.
// Each run of the origin reads its /healthz before and after: page and part renders begun, parts
// answered from the part cache, parts that got their placeholder (timeout, failure, shed), so that
// a row not answered as its name says is marked so instead of passing for it. After the rounds,
// bench/part-floor.mjs measures the floor of a part's render on the server CPUs.
import { spawnTracked } from '../../scripts/lib/child-process.mjs';
import { request } from '../../scripts/lib/http.mjs';
import { readHealth } from './health.mjs';
import { askEach, upstreamEnv } from './data-upstream.mjs';
import { cpuShare, measuredRun, minus } from './load.mjs';
import { pinned, readPeakRss, resetPeakRss, startServer } from './process.mjs';
import { roundOrder } from './round-order.mjs';
import {
  PAGES_PER_VISITOR,
  PATHS,
  PERSONAL_VISITORS,
  personalRequests,
  POPULAR_PRODUCTS,
  renderedPathAt,
} from './scenarios.mjs';
import { checkPersonal, judgeRun } from './validate.mjs';
import { READY_LINE, ROOT, getVariant, variantEnv } from './variants.mjs';

export const PERSONAL_SCENARIO = 'ssr-personal';

/**
 * `server`: which process answers; `sweep`: what is asked before each measured run so that the
 * run starts with every entry fresh (`pages`: each page twice, without the cookie, for the render
 * cache's second-request admission; `visitors`: that, then every visitor's pages once, which keeps
 * each visitor's parts); `renders`: it renders (the longer warm-up); `expect`: how its parts must be
 * answered (`kept`: from the part cache, `rendered`: each rendered, `none`: no part at all).
 * @typedef {'anonymous' | 'returning' | 'new' | 'private' | 'stock'} SetupName
 * @typedef {{ name: SetupName, label: string, server: 'origin' | 'stock', sweep?: 'pages' | 'visitors',
 *   renders: boolean, expect?: 'kept' | 'rendered' | 'none' }} Setup
 */

/** @type {Setup[]} */
export const SETUPS = [
  {
    name: 'anonymous',
    label: 'the origin, no cookie: the shared cached page',
    server: 'origin',
    sweep: 'pages',
    renders: false,
    expect: 'none',
  },
  {
    name: 'returning',
    label: `the origin, ${PERSONAL_VISITORS} signed-in visitors × ${PAGES_PER_VISITOR} pages: each part kept for its visitor`,
    server: 'origin',
    sweep: 'visitors',
    renders: false,
    expect: 'kept',
  },
  {
    name: 'new',
    label: 'the origin, a new visitor on every request: every part rendered',
    server: 'origin',
    sweep: 'pages',
    renders: true,
    expect: 'rendered',
  },
  {
    name: 'private',
    label: `the origin's ${PATHS.personal?.private.path}: a private route, rendered per request`,
    server: 'origin',
    renders: true,
  },
  {
    name: 'stock',
    label: "the stock server, the returning visitors' pages: each rendered whole, no parts",
    server: 'stock',
    renders: true,
  },
];

/** The figures of /healthz a run is judged by, summed: renders begun, parts kept, placeholders given. */
async function counters(server) {
  const health = await readHealth(server.url);
  const errors = health.errors ?? {};
  return {
    pageRenders: health.renders.started,
    partRenders: health.renders.partsStarted,
    partHits: health.partCache?.hits ?? 0,
    // A part due to a visitor that got its placeholder instead: too late, failed, or shed.
    placeholders:
      (errors.ORIGIN_PART_TIMEOUT ?? 0) +
      (errors.ORIGIN_PART_FAILED ?? 0) +
      (errors.ORIGIN_OVERLOADED ?? 0),
  };
}

/**
 * @param {{ options: ReturnType<typeof import('./options.mjs').parseOptions>, pin: { enabled: boolean, serverCpus: string },
 *   load: Awaited<ReturnType<typeof import('./load.mjs').startLoadGenerator>>,
 *   progress: ReturnType<typeof import('./progress.mjs').createProgress>,
 *   build: import('./scenarios.mjs').BuildInfo, settle: () => Promise<void>, requestTimeout: number,
 *   upstreams: Awaited<ReturnType<typeof import('./data-upstream.mjs').createUpstreams>> }} context
 *   (upstreams: each process gets an API of its own, answering at once, its data cache off, as in
 *   every scenario but ssr-data)
 */
export function createPersonalBench({
  options,
  pin,
  load,
  progress,
  build,
  settle,
  requestTimeout,
  upstreams,
}) {
  /** @type {Map<'origin' | 'stock', { server?: import('./process.mjs').RunningServer, error?: string, crashed?: string }>} */
  const servers = new Map();
  /** @type {Map<SetupName, import('./validate.mjs').ScenarioCheck>} */
  const checks = new Map();
  const warmed = new Set();
  const runs = [];
  let floor;

  const crashReason = (server) => {
    const exit = server.exited();
    return exit
      ? `the server exited (${exit.signal ?? `code ${exit.code}`}): ${server.output().trim().split('\n').slice(-3).join(' / ')}`
      : undefined;
  };

  /** Starts the origin and the stock server, and checks each setup's answers. */
  const start = async () => {
    for (const name of /** @type {const} */ (['origin', 'stock'])) {
      progress.step(`starting ${PERSONAL_SCENARIO} · ${name}`, 4);
      const variant = getVariant(name);
      const entry = {};
      servers.set(name, entry);
      try {
        const command = variant.command();
        entry.server = await startServer({
          command: pin.enabled ? pinned(command, pin.serverCpus) : command,
          env: { ...variantEnv(variant, 1), ...upstreamEnv(await upstreams.start(0), false) },
          cwd: ROOT,
          ready: READY_LINE,
        });
      } catch (error) {
        entry.error = error instanceof Error ? error.message : String(error);
        progress.log(`✗ ${PERSONAL_SCENARIO} · ${name} did not start: ${entry.error}`);
      }
    }
    for (const setup of SETUPS) {
      const { server } = servers.get(setup.server);
      if (!server) continue;
      const check = await checkPersonal(server.url, setup.name, build);
      checks.set(setup.name, check);
      progress.log(
        `✓ ${PERSONAL_SCENARIO} · ${setup.name} (${setup.server}, pid ${server.pid}) · ${check.valid ? 'ok' : `INVALID: ${check.problems.join('; ')}`}`,
      );
    }
  };

  /** Every entry the setup reads made fresh, so that none of them ages past its life during the run. */
  const sweep = async (server, setup, round) => {
    const pages = Array.from({ length: POPULAR_PRODUCTS }, (_, k) => renderedPathAt(k));
    const problems = [...(await askEach(server.url, pages)), ...(await askEach(server.url, pages))];
    if (setup.sweep === 'visitors') {
      // Each returning visitor's pages once, several at a time: their parts rendered and kept.
      const asks = personalRequests('returning', round);
      let next = 0;
      const worker = async () => {
        while (next < asks.length) {
          const { path, headers } = asks[next++];
          const res = await request(server.url, path, { headers, timeoutMs: 30_000 });
          if (res.status !== 200) problems.push(`GET ${path} while sweeping: ${res.status}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    }
    return problems;
  };

  /** One measured run of a setup. */
  const measure = async (setup, round) => {
    const entry = servers.get(setup.server);
    const check = checks.get(setup.name);
    const { server } = entry;
    if (!server || entry.crashed || !check?.valid) return;
    const job = {
      url: server.url,
      requests: personalRequests(setup.name, round),
      connections: options.connections,
      pipelining: options.pipelining,
      timeout: requestTimeout,
    };
    const problems = [];
    if (setup.sweep) {
      // Once the previous setup's renders are over (a private or new run ends with renders still
      // queued): the sweep's part renders are not to wait behind them.
      await settle();
      progress.step(
        `round ${round}/${options.rounds} · ${PERSONAL_SCENARIO} · ${setup.name} · sweep`,
        3,
      );
      problems.push(...(await sweep(server, setup, round)));
    }
    const warmup = setup.renders ? options.renderWarmup : options.warmup;
    if (!warmed.has(setup.name) && warmup > 0) {
      await settle();
      progress.step(
        `round ${round}/${options.rounds} · ${PERSONAL_SCENARIO} · ${setup.name} · warm-up`,
        warmup,
      );
      await load.run({ ...job, duration: warmup });
    }
    warmed.add(setup.name);
    await settle();
    progress.step(
      `round ${round}/${options.rounds} · ${PERSONAL_SCENARIO} · ${setup.name} · measuring`,
      options.duration + 1,
    );
    const origin = setup.server === 'origin';
    resetPeakRss(server.pid);
    const {
      result,
      cpuSeconds,
      counted: done = {},
      lengthenedTo,
    } = await measuredRun((duration) => load.run({ ...job, duration }), {
      pids: [server.pid],
      count: origin
        ? async () => {
            const before = await counters(server);
            return async () => minus(await counters(server), before);
          }
        : undefined,
      duration: options.duration,
      settle,
      log: progress.log,
    });
    const serverCpu = cpuShare(cpuSeconds, result.duration);
    problems.push(...judgeRun(result, check));
    const died = crashReason(server);
    if (died) {
      entry.crashed = died;
      problems.push(died);
    } else {
      // Still each visitor's own after the load? A server that mixes them up under load must not look fast.
      const after = await checkPersonal(server.url, setup.name, build);
      if (!after.valid) problems.push(...after.problems.map((problem) => `after load: ${problem}`));
    }
    runs.push({
      round,
      setup: setup.name,
      result,
      serverCpu,
      peakRss: readPeakRss(server.pid),
      ...done,
      lengthenedTo,
      problems,
    });
    const counts = origin
      ? `, ${done.partRenders} part renders, ${done.partHits} kept parts, ${done.placeholders} placeholders, ${done.pageRenders} page renders`
      : '';
    progress.log(
      `  r${round} ${PERSONAL_SCENARIO} ${setup.name.padEnd(10)} ${Math.round(result.rps).toString().padStart(7)} req/s, ` +
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, CPU server ${serverCpu === undefined ? '?' : Math.round(serverCpu * 100)}% / load ${Math.round(result.loadCpu * 100)}%${counts}` +
        (problems.length ? ` ✗ ${problems.join('; ')}` : ''),
    );
  };

  /**
   * The floor of a part's render (bench/part-floor.mjs) in a process of its own on the server CPUs,
   * once nothing else runs there: its figures, or why there are none.
   */
  const measureFloor = async () => {
    await settle();
    // Long enough for the JIT to settle in a measurement (a fifth of it warms up), short in a look.
    const seconds = options.quick ? 2 : options.duration * 5;
    progress.step(`${PERSONAL_SCENARIO} · the floor of a part (bench/part-floor.mjs)`, seconds + 3);
    const command = pinned(
      [
        process.execPath,
        'bench/part-floor.mjs',
        '--json',
        '--seconds',
        String(seconds),
        '--rounds',
        String(Math.max(options.rounds, 2)),
      ],
      pin.enabled ? pin.serverCpus : undefined,
    );
    const child = spawnTracked(command[0], command.slice(1), {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    const json = output.trim().split('\n').at(-1);
    try {
      floor = { ...JSON.parse(json ?? ''), seconds };
    } catch {
      floor = { error: `exit ${code}: ${output.trim().split('\n').slice(-3).join(' / ')}` };
    }
    progress.log(
      floor.error
        ? `  ✗ ${PERSONAL_SCENARIO} floor: ${floor.error}`
        : `  ${PERSONAL_SCENARIO} floor: bare renderApplication ${Math.round(floor.result.bare.cpuUs)} µs, the part ${Math.round(floor.result.part.cpuUs)} µs of CPU per render`,
    );
  };

  return {
    start,
    /** Pids of the scenario's processes still running (the runner settles on them). */
    pids: () =>
      [...servers.values()]
        .filter(({ server }) => server && !server.exited())
        .map(({ server }) => server.pid),
    /** The scenario's share of one round, its setups in a Williams order that changes per round. */
    round: async (round) => {
      for (const setup of roundOrder(SETUPS, round - 1)) await measure(setup, round);
    },
    floor: measureFloor,
    /** What the report and the JSON need. */
    results: () => ({
      visitors: PERSONAL_VISITORS,
      pagesPerVisitor: PAGES_PER_VISITOR,
      setups: SETUPS.map((setup) => {
        const entry = servers.get(setup.server);
        return {
          name: setup.name,
          label: setup.label,
          server: setup.server,
          expect: setup.expect,
          started: Boolean(entry?.server),
          error: entry?.error,
          crashed: entry?.crashed,
          pid: entry?.server?.pid,
          check: checks.get(setup.name),
        };
      }),
      runs,
      floor,
    }),
    close: async () => {
      await Promise.all([...servers.values()].map(({ server }) => server?.stop()));
    },
  };
}

/** Seconds the whole scenario takes, roughly, for the runner's estimate. */
export function personalSeconds({ duration, rounds, warmup, renderWarmup, quick }, startupS) {
  const warmups = SETUPS.reduce((sum, setup) => sum + (setup.renders ? renderWarmup : warmup), 0);
  const sweeps = SETUPS.filter((setup) => setup.sweep).length * 3;
  const floor = (quick ? 2 : duration * 5) + 3;
  return 2 * startupS + warmups + rounds * (SETUPS.length * (duration + 1) + sweeps) + floor;
}
