// `npm run bench`: the comparison of this project's origin with the stock Angular server, the
// reference article's servers and the physical ceiling. See bench/README.md for how to read it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { killChildren } from '../scripts/lib/child-process.mjs';
import { declaredInputs } from '../server/request/render-inputs.ts';
import { readHealth } from './lib/health.mjs';
import { ensureBenchPackages } from './install.mjs';
import { buildFingerprint, compareBuilds, ensureBuilds, listPatches } from './lib/build.mjs';
import { barChart } from './lib/chart.mjs';
import { cpuShare, measuredRun, startLoadGenerator } from './lib/load.mjs';
import {
  canPin,
  describeMachine,
  measureBusyCpu,
  pinProcess,
  startCpuWindow,
} from './lib/machine.mjs';
import { HELP, parseOptions } from './lib/options.mjs';
import { startOtlpSink } from './lib/otlp-sink.mjs';
import {
  installCleanup,
  pinned,
  readCpuSeconds,
  readPeakRss,
  resetPeakRss,
  startServer,
  waitUntilIdle,
} from './lib/process.mjs';
import { describeSite, measuredSite } from './lib/measured-site.mjs';
import { createProgress, formatDuration } from './lib/progress.mjs';
import { roundOrder } from './lib/round-order.mjs';
import {
  pairedRate,
  perAnswer,
  pairedTable,
  pairsIn,
  runPairedRound,
  summarizePairs,
} from './lib/paired-cpu.mjs';
import { updateReadme } from './lib/readme.mjs';
import {
  equalLoadRate,
  equalLoadTable,
  markdown,
  addUpstreamPerPage,
  compressionTarget,
  dataTarget,
  renderCacheTarget,
  visitorTarget,
  summarize,
  terminalTable,
} from './lib/report.mjs';
import {
  askEach,
  burst,
  BURST_PAGES,
  createUpstreams,
  DATA_DELAY_MS,
  DATA_SCENARIO,
  upstreamEnv,
} from './lib/data-upstream.mjs';
import {
  dataPages,
  describeBuild,
  getScenario,
  PATHS,
  SKIPPED_SCENARIOS,
} from './lib/scenarios.mjs';
import { sharedMarkdown, sharedTerminal, summarizeShared } from './lib/shared-report.mjs';
import { createSharedBench, SHARED_SCENARIO, sharedSeconds } from './lib/shared-tier.mjs';
import { createPersonalBench, PERSONAL_SCENARIO, personalSeconds } from './lib/personal-parts.mjs';
import { personalMarkdown, personalTerminal, summarizePersonal } from './lib/personal-report.mjs';
import { checkScenario, judgeRun } from './lib/validate.mjs';
import {
  addBaseline,
  DIST,
  READY_LINE,
  ROOT,
  STOCK_DIST,
  getVariant,
  variantEnv,
} from './lib/variants.mjs';

/** Seconds per request a load run may wait for an answer before autocannon counts a timeout. */
const REQUEST_TIMEOUT_S = 10;
/** Rough costs for the up-front estimate (measured on a 2-core machine). */
const STARTUP_ESTIMATE_S = 3;
const RUN_OVERHEAD_S = 0.7;
/** Unmeasured seconds of load before each run of a scenario that reads the render cache. */
const CACHE_REFRESH_S = 1;

/** The renders an origin has begun (/healthz), or undefined from a server without one. */
async function rendersBegun(url) {
  try {
    return (await readHealth(url)).renders?.started;
  } catch {
    return undefined;
  }
}

/**
 * The critical-CSS line of the report: one setting (on, checked on every rendered page), by
 * mechanism; and whether the app's global stylesheet left anything to inline.
 */
function describeCriticalCss(names, build) {
  const byMechanism = new Map();
  for (const name of names) {
    const { criticalCss } = getVariant(name);
    byMechanism.set(criticalCss, [...(byMechanism.get(criticalCss) ?? []), name]);
  }
  const mechanisms = [...byMechanism].map(
    ([mechanism, variants]) => `${mechanism} (${variants.join(', ')})`,
  );
  const checked = build.criticalCss
    ? 'checked on each rendered page before the load (inlined style block, stylesheet deferred)'
    : `nothing to inline: the app's global stylesheet ${build.stylesCss ? `(${build.stylesCss.path}) holds no rule, so each rendered page was checked for its link only` : 'does not exist'}`;
  return `on in every variant, ${checked}; ${mechanisms.join('; ')}; the prerendered ${PATHS.prerendered} was inlined by the build`;
}

/** The cookies the app's routes declare (renderInputs()), each with its values: what visitors send. */
async function declaredCookies(serverDir) {
  const { serverRoutes } = await import(pathToFileURL(join(serverDir, 'main.server.mjs')).href);
  return declaredInputs(serverRoutes)
    .filter((input) => input.kind === 'cookie')
    .map((input) => ({ name: input.name, values: [...input.values] }));
}

/** The baseline must be a build of the same app, with an origin to start. */
function checkBaseline(dir) {
  if (!existsSync(join(dir, 'server/server.mjs'))) {
    throw new Error(
      `--baseline ${dir} holds no server/server.mjs: give the output folder of ng build`,
    );
  }
  const differences = compareBuilds(join(DIST, 'browser'), join(dir, 'browser'));
  if (differences.length > 0) {
    throw new Error(
      `--baseline ${dir} does not serve the same browser build as ${relative(ROOT, DIST)}/ (names + sizes differ), so the ` +
        `comparison would not be fair:\n  ${differences.slice(0, 12).join('\n  ')}`,
    );
  }
}

/**
 * The processes a variant runs the scenarios in: one for every scenario that can share it, and one
 * for each scenario that needs its own (`own`).
 * @param {string[]} scenarios
 * @returns {{ own?: import('./lib/scenarios.mjs').Scenario, scenarios: string[] }[]}
 */
function processGroups(scenarios) {
  const shared = scenarios.filter((name) => !getScenario(name).ownProcess);
  return [
    ...(shared.length > 0 ? [{ scenarios: shared }] : []),
    ...scenarios
      .filter((name) => getScenario(name).ownProcess)
      .map((name) => ({ own: getScenario(name), scenarios: [name] })),
  ];
}

/** Which of a variant's processes loads `scenario`: its own (`origin@ssr-data`), or the variant's. */
const processKey = (name, scenario) =>
  getScenario(scenario).ownProcess ? `${name}@${scenario}` : name;

/**
 * The share of the slowest variant's median a scenario's fixed-rate runs ask for: --equal-load, or
 * less where the scenario says (ssr-data: half, to stay below every server's capacity).
 */
function equalLoadShare(name, share) {
  const own = getScenario(name).equalLoadShare;
  return own === undefined ? share : Math.min(own, share);
}

/** The scenarios whose fixed-rate runs ask for less than --equal-load, with their share. */
function equalLoadShares(scenarios, share) {
  return Object.fromEntries(
    scenarios.map((name) => [name, equalLoadShare(name, share)]).filter(([, own]) => own !== share),
  );
}

/** The check of a scenario whose process did not start. */
function notStarted(why) {
  return {
    valid: false,
    problems: [`its process did not start: ${why}`],
    notes: [],
    context: {},
    expectedStatuses: [200],
    minBytesPerResponse: 0,
  };
}

/**
 * Checks what a fresh process answers for its scenarios. A process of pages made of data gets a
 * burst first (nothing asked of its API yet), then, checked, every page of its set once (`warm`):
 * what the load then measures is a server after warm-up. Returns a verdict per scenario.
 */
async function checkProcess({ state, variant, group, server, upstream, build, warm }) {
  if (group.own) {
    const paths = dataPages()
      .slice(0, BURST_PAGES)
      .map((page) => page.path);
    state.bursts[group.own.name] = await burst(server.url, paths, upstream);
  }
  const verdicts = [];
  for (const scenario of group.scenarios) {
    const check = await checkScenario(server.url, scenario, build);
    if (group.own) {
      const more = burstProblems(state.bursts[scenario]);
      if (more.length === 0 && check.valid && warm) {
        // The rest of the set: the burst asked for its first pages already.
        const rest = dataPages()
          .slice(BURST_PAGES)
          .map((page) => page.path);
        more.push(...(await askEach(server.url, rest, 16)));
      }
      if (more.length > 0) {
        check.problems.push(...more);
        check.valid = false;
        check.statusOnly = false;
      }
    }
    // A peer that answers one of the app's routes with another status (a redirect to a
    // folder, a 200 where the app's server route says 404) cannot serve this app: said so.
    check.unsupported = Boolean(variant.peer && check.statusOnly);
    state.checks[scenario] = check;
    verdicts.push(
      check.valid
        ? `${scenario} ok${check.revalidation && check.revalidation !== '304' ? ` (${check.revalidation})` : ''}`
        : check.unsupported
          ? `${scenario} cannot serve`
          : `${scenario} INVALID`,
    );
  }
  return verdicts;
}

/** What is wrong with a burst's answers: pages not made, or made without asking the API. */
function burstProblems(result) {
  const problems = [];
  const failed = Object.entries(result.statuses).filter(([status]) => status !== '200');
  if (failed.length > 0)
    problems.push(
      `a burst of ${result.pages} pages: ${failed.map(([status, n]) => `${n}× ${status}`).join(', ')}`,
    );
  if (result.notRendered > 0)
    problems.push(
      `a burst of ${result.pages} pages: ${result.notRendered} answered 200 without a render for the request (no ng-server-context="ssr")`,
    );
  if (result.upstreamRequests === 0)
    problems.push(
      `a burst of ${result.pages} pages asked the app's API for nothing: do its renders read API_URL?`,
    );
  return problems;
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(HELP);
    return;
  }
  installCleanup();
  if (options.baseline !== undefined) {
    addBaseline(options.baseline);
  }
  // ssr-shared and ssr-personal are not run per variant: they start their own processes
  // (bench/lib/shared-tier.mjs, bench/lib/personal-parts.mjs).
  let variantScenarios = options.scenarios.filter((name) => !getScenario(name).ownSetups);
  const sharedAsked = options.scenarios.includes(SHARED_SCENARIO);
  const personalAsked = options.scenarios.includes(PERSONAL_SCENARIO);
  // Only those asked for: no variant has anything to run.
  let variantNames = variantScenarios.length > 0 ? options.variants : [];
  /** Warm-up seconds before a variant's first run of a scenario: longer where pages render. */
  const warmupFor = (scenarioName) =>
    getScenario(scenarioName).renders ? options.renderWarmup : options.warmup;
  const startedAt = new Date().toISOString();
  const say = (line = '') => process.stdout.write(`${line}\n`);

  const pinPossible = canPin();
  if (options.pin === true && !pinPossible)
    throw new Error('--pin needs taskset and at least 2 CPUs');
  const { serverCpus, loadCpus } = options;
  const pin = {
    enabled: options.pin ?? pinPossible,
    serverCpus,
    loadCpus,
    reason:
      options.pin === false
        ? 'disabled with --no-pin'
        : pinPossible
          ? 'taskset available'
          : 'needs taskset and ≥ 2 CPUs',
  };
  const pairs = variantNames.length * variantScenarios.length;
  const cpuPairs = options.pairedCpu > 0 ? pairsIn(variantNames, variantScenarios) : [];
  const plannedSeconds =
    variantNames.length * (STARTUP_ESTIMATE_S + 1) +
    // A scenario run in processes of its own (ssr-data): their start, burst and warming pass.
    variantNames.length *
      variantScenarios.filter((name) => getScenario(name).ownProcess).length *
      (STARTUP_ESTIMATE_S + 1 + dataPages().length / 60) +
    variantNames.length * variantScenarios.reduce((sum, name) => sum + warmupFor(name), 0) +
    options.rounds * pairs * (options.duration + RUN_OVERHEAD_S) +
    options.rounds *
      variantNames.length *
      variantScenarios.filter((name) => getScenario(name).refreshesCache).length *
      CACHE_REFRESH_S +
    // Equal-load runs: as many rounds, as long as the flat-out ones.
    (options.equalLoad > 0 ? options.rounds * pairs * (options.duration + RUN_OVERHEAD_S) : 0) +
    options.rounds * cpuPairs.length * (options.duration + RUN_OVERHEAD_S) +
    (sharedAsked ? sharedSeconds(options, STARTUP_ESTIMATE_S) : 0) +
    (personalAsked ? personalSeconds(options, STARTUP_ESTIMATE_S) : 0);

  say(`Angular SSR bench · ${startedAt}`);
  say(
    `  variants:   ${variantNames.join(', ') || '(none: only scenarios that start servers of their own)'}`,
  );
  say(`  scenarios:  ${options.scenarios.join(', ')}`);
  for (const { name, why } of SKIPPED_SCENARIOS) say(`  skipped:    ${name}: ${why}`);
  say(
    `  load:       autocannon, ${options.connections} connections, pipelining ${options.pipelining}, ` +
      `${options.rounds} round(s) × ${options.duration} s, ${options.warmup} s warm-up (${options.renderWarmup} s where pages render)${options.quick ? ' (--quick)' : ''}`,
  );
  say(
    `  pinning:    ${pin.enabled ? `yes: servers on CPU ${serverCpus}, load generator on CPU ${loadCpus} (taskset)` : `no (${pin.reason})`}`,
  );
  say(
    `  estimate:   ~${formatDuration(plannedSeconds)} of load and startup, plus a build if ${relative(ROOT, DIST)}/ is stale`,
  );
  if (plannedSeconds > 1200)
    say(
      '  (more than 20 minutes: fewer --rounds, a shorter --duration or fewer --variants would be quicker)',
    );
  say();

  if (variantNames.some((name) => name.startsWith('origin-traced'))) {
    const sink = await startOtlpSink();
    process.env.BENCH_OTLP_SINK = sink.url;
  }

  // The peers (and the stock build's Express) come from bench/node_modules, installed on demand.
  await ensureBenchPackages({ log: say });
  const { builtStock } = ensureBuilds({
    stock: variantNames.includes('stock') || personalAsked,
    skip: options.skipBuild,
    log: say,
  });
  // A localized build: the locale load-paths.json's pages are under, its files and its app.
  const site = await measuredSite(DIST);
  const localized = describeSite(site);
  if (localized) say(`Measuring ${localized}.`);
  const build = describeBuild(site, DIST);
  // Pages made of data get it from the app's own API, which the bench serves, one for each process
  // it loads (bench/lib/data-upstream.mjs); without one, the scenario made of data cannot run.
  const upstreams = await createUpstreams(site.serverDir);
  const skipped = [...SKIPPED_SCENARIOS];
  if (upstreams.missing) {
    for (const name of variantScenarios.filter((one) => getScenario(one).needs === 'data')) {
      skipped.push({ name, why: upstreams.missing });
      say(`  skipped:    ${name}: ${upstreams.missing}`);
    }
    variantScenarios = variantScenarios.filter((one) => getScenario(one).needs !== 'data');
    if (variantScenarios.length === 0) variantNames = [];
  }
  // ssr-shared's processes are the origin's, ssr-personal's the origin and stock: their mechanisms
  // are named even when no variant runs.
  const ownServers = [
    ...(sharedAsked || personalAsked ? ['origin'] : []),
    ...(personalAsked ? ['stock'] : []),
  ];
  const criticalCss = describeCriticalCss(
    [...variantNames, ...ownServers.filter((name) => !variantNames.includes(name))],
    build,
  );
  if (variantScenarios.includes('ssr-visitors')) {
    build.declaredCookies = await declaredCookies(site.serverDir);
  }
  if (options.baseline !== undefined) {
    checkBaseline(options.baseline);
  }
  const servedDirs = [
    DIST,
    ...(variantNames.includes('stock') || personalAsked ? [STOCK_DIST] : []),
    ...(options.baseline === undefined ? [] : [options.baseline]),
  ];
  const fingerprint = buildFingerprint(servedDirs);
  const assertBuildUnchanged = () => {
    let now;
    try {
      now = buildFingerprint(servedDirs);
    } catch {
      now = undefined;
    }
    if (now !== fingerprint) {
      throw new Error(
        `${relative(ROOT, DIST)}/ (or dist-bench/stock/) changed while the bench was running: something rebuilt it under the ` +
          'running servers, so these numbers would compare different things. Nothing was written; run again ' +
          'when nothing else builds.',
      );
    }
  };
  const machine = describeMachine();
  const busy = await measureBusyCpu();
  machine.busyBeforeStart = busy === undefined ? undefined : Math.round(busy * 100) / 100;
  if (busy !== undefined && busy > 0.2) {
    say(
      `warning: ${Math.round(busy * 100)}% of the CPUs were busy with something else just before the bench: expect noisy numbers`,
    );
  }
  if (pin.enabled && !pinProcess(process.pid, loadCpus))
    throw new Error('taskset could not pin the runner');

  // Time the hypervisor gives other guests slows every server unevenly across rounds: reported at the end.
  const cpuWindow = startCpuWindow();
  const progress = createProgress({ plannedSeconds });
  const load = await startLoadGenerator({ cpus: pin.enabled ? loadCpus : undefined });

  /** @type {Map<string, { server?: import('./lib/process.mjs').RunningServer }>} */
  const servers = new Map();
  /** @type {import('./lib/report.mjs').VariantState[]} */
  const states = [];
  /** @type {import('./lib/report.mjs').Run[]} */
  const runs = [];
  /** @type {import('./lib/report.mjs').EqualLoadRun[]} */
  const equalLoadRuns = [];
  /** @type {import('./lib/paired-cpu.mjs').PairedRun[]} */
  const pairedRuns = [];
  /** @type {ReturnType<typeof createSharedBench> | undefined} */
  let shared;
  /** @type {ReturnType<typeof createPersonalBench> | undefined} */
  let personal;

  try {
    // Start every variant, then check every scenario's answers before any load. A variant runs in
    // one process, and in one more for each scenario that needs its own (ssr-data: other cache
    // settings, an API that answers late); each process asks an API of its own, counted apart.
    for (const name of variantNames) {
      const variant = getVariant(name);
      /** @type {import('./lib/report.mjs').VariantState & { startupMs?: number, pid?: number, pids: number[] }} */
      const state = {
        name,
        label: variant.label,
        runtime: variant.runtime,
        about: variant.about,
        command: variant
          .command()
          .map((part) => (part.startsWith(ROOT) ? relative(ROOT, part) : part))
          .join(' '),
        started: false,
        checks: {},
        pids: [],
        bursts: {},
      };
      states.push(state);
      for (const group of processGroups(variantScenarios)) {
        const key = processKey(name, group.scenarios[0]);
        progress.step(`starting ${key}`, STARTUP_ESTIMATE_S + 1);
        const upstream = await upstreams.start(group.own?.upstreamDelayMs ?? 0);
        const started = Date.now();
        let server;
        try {
          const command = variant.command();
          server = await startServer({
            command: pin.enabled ? pinned(command, serverCpus) : command,
            env: {
              ...variantEnv(variant, pin.enabled ? options.serverCpuCount : availableParallelism()),
              ...upstreamEnv(upstream, group.own !== undefined),
            },
            cwd: ROOT,
            ready: READY_LINE,
          });
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          progress.log(`✗ ${key} did not start: ${why}`);
          if (!group.own) {
            state.error = why;
            break;
          }
          state.checks[group.own.name] = notStarted(why);
          continue;
        }
        servers.set(key, { server, upstream });
        state.started = true;
        state.pid ??= server.pid;
        state.startupMs ??= Date.now() - started;
        state.pids.push(server.pid);
        const verdicts = await checkProcess({
          state,
          variant,
          group,
          server,
          upstream,
          build,
          // --quick is a look, not a measurement: the burst's pages are all it warms.
          warm: !options.quick,
        });
        progress.log(
          `✓ ${key} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (pid ${server.pid}) · ${verdicts.join(', ')}`,
        );
        for (const scenario of group.scenarios) {
          const check = state.checks[scenario];
          if (!check.valid) progress.log(`    ${scenario}: ${check.problems.join('; ')}`);
        }
      }
    }

    const warmed = new Set();
    const livePids = () => [
      ...[...servers.values()]
        .filter(({ server }) => server && !server.exited())
        .map(({ server }) => server.pid),
      ...(shared?.pids() ?? []),
      ...(personal?.pids() ?? []),
    ];
    const settle = async () => {
      const idle = await waitUntilIdle(livePids());
      if (!idle.settled)
        progress.log(
          `  (servers still busy after ${(idle.waitedMs / 1000).toFixed(1)} s: starting anyway)`,
        );
    };
    // What both scenarios that start their own servers are run with.
    const ownServers = {
      options,
      pin,
      load,
      progress,
      build,
      settle,
      requestTimeout: REQUEST_TIMEOUT_S,
    };
    if (sharedAsked) {
      shared = createSharedBench({
        ...ownServers,
        // Its origins render pages made of data too: an API that answers at once, data cache off.
        env: upstreamEnv(await upstreams.start(0), false),
      });
      await shared.start();
    }
    if (personalAsked) {
      personal = createPersonalBench({ ...ownServers, upstreams });
      await personal.start();
    }
    /** What a variant is loaded with in a scenario, or undefined when it cannot be (not valid, not running). */
    const target = (name, scenarioName) => {
      const state = states.find((candidate) => candidate.name === name);
      const server = servers.get(processKey(name, scenarioName))?.server;
      const check = state.checks[scenarioName];
      if (!server || state.crashed || !check?.valid) return undefined;
      const { upstream } = servers.get(processKey(name, scenarioName));
      const job = {
        url: server.url,
        requests: getScenario(scenarioName).requests(build, check.context),
        connections: options.connections,
        pipelining: options.pipelining,
        timeout: REQUEST_TIMEOUT_S,
      };
      return { state, server, check, job, upstream };
    };
    /** Marks a variant whose server died during a run; returns the reason, or undefined if it runs. */
    const crashed = (state, server) => {
      const exit = server.exited();
      if (!exit) return undefined;
      state.crashed = `the server exited (${exit.signal ?? `code ${exit.code}`}): ${server.output().trim().split('\n').slice(-3).join(' / ')}`;
      return state.crashed;
    };
    for (let round = 1; round <= options.rounds; round++) {
      for (const scenarioName of variantScenarios) {
        for (const name of roundOrder(variantNames, round - 1)) {
          const loaded = target(name, scenarioName);
          if (!loaded) continue;
          const { state, server, check, job, upstream } = loaded;
          const key = `${name}/${scenarioName}`;
          const warmup = warmupFor(scenarioName);
          if (!warmed.has(key) && warmup > 0) {
            await settle();
            progress.step(
              `round ${round}/${options.rounds} · ${scenarioName} · ${name} · warm-up`,
              warmup,
            );
            await load.run({ ...job, duration: warmup });
          }
          warmed.add(key);
          // The minutes between two runs of a cached scenario age every entry past s-maxage at once,
          // so each run would start with 100 refresh renders that steady traffic spreads over a
          // minute (<1% of the CPU at these rates): one unmeasured second lets them happen first.
          if (getScenario(scenarioName).refreshesCache && warmup > 0) {
            progress.step(
              `round ${round}/${options.rounds} · ${scenarioName} · ${name} · cache refresh`,
              CACHE_REFRESH_S,
            );
            await load.run({ ...job, duration: CACHE_REFRESH_S });
          }

          await settle();
          const resetOk = resetPeakRss(server.pid);
          progress.step(
            `round ${round}/${options.rounds} · ${scenarioName} · ${name} · measuring`,
            options.duration + RUN_OVERHEAD_S,
          );
          const {
            result,
            cpuSeconds,
            counted: upstreamRequests,
            lengthenedTo,
          } = await measuredRun((duration) => load.run({ ...job, duration }), {
            pids: [server.pid],
            // What reached the process's API while it was measured, kept with the run: requests
            // left in flight when the load stops are counted without their pages (report.mjs
            // uses the fixed-rate runs' counts).
            count:
              upstream &&
              (async () => {
                const before = upstream.total();
                return async () => upstream.total() - before;
              }),
            duration: options.duration,
            settle,
            log: progress.log,
          });
          const serverCpu = cpuShare(cpuSeconds, result.duration);
          const peakRss = readPeakRss(server.pid);
          const problems = judgeRun(result, check);
          const died = crashed(state, server);
          if (died) {
            problems.push(died);
          } else {
            // Still correct after the load? A server that degrades under load must not look fast.
            const after = await checkScenario(server.url, scenarioName, build);
            if (!after.valid)
              problems.push(...after.problems.map((problem) => `after load: ${problem}`));
          }
          assertBuildUnchanged();
          runs.push({
            round,
            scenario: scenarioName,
            variant: name,
            result,
            serverCpu,
            peakRss,
            peakRssReset: resetOk,
            upstreamRequests,
            lengthenedTo,
            problems,
          });
          const cpu = `CPU server ${serverCpu === undefined ? '?' : Math.round(serverCpu * 100)}% / load ${Math.round(result.loadCpu * 100)}%`;
          const latency = `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${cpu}`;
          progress.log(
            `  r${round} ${scenarioName.padEnd(10)} ${name.padEnd(20)} ${Math.round(result.rps).toString().padStart(7)} req/s, ${latency}` +
              (problems.length ? ` ✗ ${problems.join('; ')}` : ''),
          );
        }
      }
      if (shared) {
        await shared.round(round);
        assertBuildUnchanged();
      }
      if (personal) {
        await personal.round(round);
        assertBuildUnchanged();
      }
    }
    // The floor of a part's render, on the server CPUs once the rounds are over (part-floor.mjs).
    if (personal) await personal.floor();

    // The flat-out medians, which set the rates of the paired and the equal-load runs.
    const throughput = summarize({
      scenarios: variantScenarios,
      variants: states,
      runs,
      rounds: options.rounds,
    });

    // CPU per render in pairs: see bench/lib/paired-cpu.mjs for why not back to back.
    if (cpuPairs.length > 0) {
      const pairRates = new Map(
        cpuPairs.map((pair) => [pair, pairedRate(throughput, pair, options.pairedCpu)]),
      );
      for (const [pair, rate] of pairRates)
        if (rate === undefined)
          progress.log(
            `  paired ${pair.scenario} ${pair.variant} with ${pair.reference}: not run, one of them has no valid ${pair.scenario} row to set its rate`,
          );
      for (let round = 1; round <= options.rounds; round++) {
        for (const pair of cpuPairs) {
          const rate = pairRates.get(pair);
          const loaded = [pair.variant, pair.reference].map((name) => target(name, pair.scenario));
          if (rate === undefined || loaded.some((one) => one === undefined)) continue;
          // As before a flat-out run of a cached scenario: the entries past s-maxage refreshed,
          // unmeasured, or one side's round would carry a hundred renders the other's does not.
          if (getScenario(pair.scenario).refreshesCache) {
            await Promise.all(
              loaded.map((one) => load.run({ ...one.job, duration: CACHE_REFRESH_S })),
            );
          }
          await settle();
          progress.step(
            `paired · round ${round}/${options.rounds} · ${pair.scenario} · ${pair.variant} with ${pair.reference} · ${rate} req/s each`,
            options.duration + RUN_OVERHEAD_S,
          );
          const measure = () =>
            runPairedRound({
              jobs: [loaded[0].job, loaded[1].job],
              checks: [loaded[0].check, loaded[1].check],
              pids: [loaded[0].server.pid, loaded[1].server.pid],
              rate,
              duration: options.duration,
              run: load.run,
              readCpuSeconds,
              readRenders: getScenario(pair.scenario).refreshesCache
                ? (side) => rendersBegun(loaded[side].server.url)
                : undefined,
            });
          let measured = await measure();
          // Entries that went stale mid-round were refreshed by it: once the renders are over,
          // the round again, on entries as fresh on both sides.
          if (
            measured.problems.some((problem) => problem.includes('during a round of cache hits'))
          ) {
            progress.log(
              `  (r${round} ${pair.scenario}: a server rendered during the round: again)`,
            );
            await settle();
            measured = await measure();
          }
          for (const one of loaded) {
            const died = crashed(one.state, one.server);
            if (died) measured.problems.push(died);
          }
          assertBuildUnchanged();
          pairedRuns.push({
            round,
            variant: pair.variant,
            reference: pair.reference,
            scenario: pair.scenario,
            rate,
            ...measured,
          });
          const [mine, theirs] = [0, 1].map((side) => {
            const us = perAnswer(measured.cpuSeconds[side], measured.answered[side]);
            return us === undefined ? '?' : Math.round(us);
          });
          progress.log(
            `  ≈ r${round} ${pair.scenario} ${pair.variant} ${mine} µs/answer, ${pair.reference} ${theirs} µs/answer at ${rate} req/s each` +
              (measured.problems.length ? ` ✗ ${measured.problems.join('; ')}` : ''),
          );
        }
      }
    }

    // Latency at equal load. Flat out (above), latency is mostly queueing: connections ÷ throughput,
    // and a server that answers files faster sends its connections sooner to the render queue. Here
    // every variant gets the same fixed rate, one the slowest variant sustained in that scenario.
    // Interleaved rounds as above: one run's p99 hangs on a few slow answers, the median of rounds less so.
    if (options.equalLoad > 0) {
      const rates = new Map(
        variantScenarios.map((name) => [
          name,
          equalLoadRate(throughput, name, equalLoadShare(name, options.equalLoad)),
        ]),
      );
      for (let round = 1; round <= options.rounds; round++) {
        for (const scenarioName of variantScenarios) {
          const rate = rates.get(scenarioName);
          if (rate === undefined) continue;
          for (const name of roundOrder(variantNames, round - 1)) {
            const loaded = target(name, scenarioName);
            if (!loaded) continue;
            const { state, server, check, job, upstream } = loaded;
            await settle();
            progress.step(
              `equal load · round ${round}/${options.rounds} · ${scenarioName} · ${name} · ${rate} req/s`,
              options.duration + RUN_OVERHEAD_S,
            );
            const upstreamBefore = upstream?.total();
            const result = await load.run({ ...job, duration: options.duration, rate });
            const upstreamRequests = upstream && upstream.total() - upstreamBefore;
            const problems = judgeRun(result, check);
            const died = crashed(state, server);
            if (died) problems.push(died);
            assertBuildUnchanged();
            equalLoadRuns.push({
              round,
              scenario: scenarioName,
              variant: name,
              rate,
              result,
              upstreamRequests,
              problems,
            });
            progress.log(
              `  = r${round} ${scenarioName.padEnd(10)} ${name.padEnd(20)} at ${rate} req/s: ${Math.round(result.rps)} answered/s, ` +
                `p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms` +
                (problems.length ? ` ✗ ${problems.join('; ')}` : ''),
            );
          }
        }
      }
    }
  } finally {
    progress.done();
    await load.close();
    await Promise.all([...servers.values()].map(({ server }) => server?.stop()));
    await shared?.close();
    await personal?.close();
    await upstreams.closeAll();
    killChildren();
  }

  const finishedAt = new Date().toISOString();
  machine.loadAverageEnd = describeMachine().loadAverage;
  const stolen = cpuWindow()?.steal;
  machine.stealDuringRuns = stolen === undefined ? undefined : Math.round(stolen * 1000) / 1000;
  const rows = summarize({
    scenarios: variantScenarios,
    variants: states,
    runs,
    rounds: options.rounds,
  });
  addUpstreamPerPage(rows, equalLoadRuns);
  const scenarioText = {
    title: (name) => getScenario(name).title,
    describe: (name) => getScenario(name).describe,
  };
  const pairedSummary = summarizePairs(pairedRuns);
  const sharedResults = shared?.results();
  const sharedSummary = sharedResults
    ? summarizeShared({ shared: sharedResults, rows, rounds: options.rounds })
    : undefined;
  const personalResults = personal?.results();
  const personalSummary = personalResults
    ? summarizePersonal({ personal: personalResults, rounds: options.rounds })
    : undefined;
  const settings = {
    variants: variantNames,
    scenarios: options.scenarios,
    connections: options.connections,
    duration: options.duration,
    rounds: options.rounds,
    pipelining: options.pipelining,
    warmup: options.warmup,
    renderWarmup: options.renderWarmup,
    equalLoad: options.equalLoad,
    pairedCpu: options.pairedCpu,
    quick: options.quick,
    requestTimeout: REQUEST_TIMEOUT_S,
    pin,
    criticalCss,
    localized,
    skipped,
    data: variantScenarios.includes(DATA_SCENARIO)
      ? { upstreamDelayMs: DATA_DELAY_MS, burstPages: BURST_PAGES }
      : undefined,
    nodeEnv: 'production',
    patches: listPatches(),
    order:
      'for each round: each scenario in turn, all variants back to back in a Williams-design order (each goes first in turn, none always follows the same one); every run starts once all servers are idle (< 5% CPU)',
    peakRss: 'VmHWM of the server process, reset before each measured run (/proc/<pid>/clear_refs)',
  };

  mkdirSync(options.out, { recursive: true });
  const stamp = startedAt.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const base = join(options.out, stamp);
  const files = { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
  const shown = (path) => (path.startsWith(ROOT) ? relative(ROOT, path) : path);
  const startups = states
    .filter((state) => state.started)
    .map((state) => [state.name, state.startupMs]);
  const mainMd = markdown({
    rows,
    scenarios: scenarioText,
    settings,
    machine,
    startedAt,
    resultsFile: shown(files.json),
    startups,
    equalLoadRuns,
    pairedSummary,
    states,
    equalLoadShares: equalLoadShares(variantScenarios, options.equalLoad),
  });
  const md = [
    mainMd,
    ...(sharedSummary
      ? [`${sharedMarkdown(sharedSummary, getScenario(SHARED_SCENARIO)).join('\n')}\n`]
      : []),
    ...(personalSummary
      ? [`${personalMarkdown(personalSummary, getScenario(PERSONAL_SCENARIO)).join('\n')}\n`]
      : []),
  ].join('');
  const subtitle = [
    `${startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} · ${machine.cpuModel}, ${machine.cpus} CPUs · Node ${machine.node}${machine.bun ? ` · Bun ${machine.bun}` : ''}`,
    `${options.connections} connections, ${options.rounds} round(s) × ${options.duration} s, ${pin.enabled ? 'server and load generator on separate CPUs' : 'no CPU pinning'}, critical CSS on everywhere`,
  ];
  const svg = barChart({ rows, title: scenarioText.title, subtitle });
  const json = {
    tool: 'bench/run.mjs',
    startedAt,
    finishedAt,
    machine,
    settings,
    build: {
      dist: relative(ROOT, DIST),
      locale: site.locale,
      locales: site.locales,
      sitePrefix: site.prefix,
      stockBuiltThisRun: builtStock,
      files: Object.fromEntries(
        [build.page, build.mainJs, build.stylesCss, ...build.initialChunks]
          .filter((file) => file !== undefined)
          .map((file) => [file.path, file.size]),
      ),
    },
    variants: states,
    runs,
    equalLoadRuns,
    pairedRuns,
    summary: rows,
    paired: pairedSummary,
    shared: sharedResults ? { ...sharedResults, summary: sharedSummary } : undefined,
    personal: personalResults ? { ...personalResults, summary: personalSummary } : undefined,
    files: { md: shown(files.md), svg: shown(files.svg) },
  };
  writeFileSync(files.json, JSON.stringify(json, null, 2) + '\n');
  writeFileSync(files.md, `# Angular SSR origin benchmark\n\n${md}`);
  writeFileSync(files.svg, svg);

  say();
  say(terminalTable(rows, scenarioText));
  if (sharedSummary) say(`\n${sharedTerminal(sharedSummary, getScenario(SHARED_SCENARIO).title)}`);
  if (personalSummary)
    say(`\n${personalTerminal(personalSummary, getScenario(PERSONAL_SCENARIO).title)}`);
  const data = dataTarget(rows, states, equalLoadRuns);
  for (const target of [
    renderCacheTarget(rows),
    visitorTarget(rows),
    compressionTarget(rows),
    data,
  ]) {
    if (target) say(`\n${target.replaceAll('**', '').replaceAll('`', '')}`);
  }
  if (equalLoadRuns.length > 0) {
    say();
    say(
      equalLoadTable(equalLoadRuns, variantNames, options.equalLoad, {
        shares: equalLoadShares(variantScenarios, options.equalLoad),
      }),
    );
  }
  if (pairedSummary.length > 0) {
    say();
    say(pairedTable(pairedSummary));
  }
  say();
  say(`Critical CSS: ${criticalCss}.`);
  if (localized) say(`Locales: ${localized}.`);
  if (settings.patches.length)
    say(`Patched dependencies (patches/): ${settings.patches.join(', ')}; see bench/README.md.`);
  if (stolen !== undefined) {
    // Steal above a few percent came with ±30% swings between rounds of the same server (2026-11-21).
    const noisy =
      stolen > 0.05
        ? ': the host was busy, expect larger swings than usual and run again to compare'
        : '';
    say(
      `Steal: the hypervisor took ${(stolen * 100).toFixed(1)}% of CPU time during the runs${noisy}.`,
    );
  }
  say(
    `Pinning: ${pin.enabled ? `servers on CPU ${serverCpus}, load generator on CPU ${loadCpus}` : `none (${pin.reason})`}.`,
  );
  say(
    `Took ${formatDuration((Date.parse(finishedAt) - Date.parse(startedAt)) / 1000)}. Results: ${shown(files.json)}, ${shown(files.md)}, ${shown(files.svg)}`,
  );
  if (options.updateReadme) {
    updateReadme(options.readme, md);
    say(
      `${shown(options.readme)}: table updated between <!-- bench:start --> and <!-- bench:end -->.`,
    );
  }
}

main().catch((error) => {
  killChildren();
  process.stderr.write(`\nbench failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
