// The `ssr-shared` scenario: two origin processes behind the same load, as two replicas behind a
// load balancer, with and without a shared render cache on Redis. It does not fit the variant ×
// scenario grid (it is always the origin, and its unit is a pair of processes plus a Redis), so it
// runs its own setups, once per round, after the variants' scenarios of that round.
//
// Per round:
// - renders per distinct page: a fresh pair (fresh L1s) on a fresh Redis, and a fresh pair without
//   one, loaded with the rotating popular ids, then every popular page asked of each process once
//   more, so every page was requested of both; renders started (summed over both /healthz) ÷ pages.
// - req/s and server CPU per response of long-lived pairs: an L1 hit (REDIS_URL, default L1,
//   caches full), a shared-tier hit (REDIS_URL, RENDER_CACHE_BYTES=1: L1 stores nothing, so every
//   request is an L1 miss answered by Redis) and a miss (RENDER_CACHE_BYTES=0: every request renders).
// - the same L1 hit on ONE origin process, with REDIS_URL and without, loaded exactly as
//   ssr-cached loads the origin (its requests, so its Host): the render cache's target (an L1 hit
//   ≥ 0.8× ssg, one process each) compares like with like, where the pairs share the server CPUs.
//   Each run also counts the renders it caused and samples Cache-Status, so a row that was not
//   answered by the tier it names says so instead of passing for it.
import { connect } from 'node:net';
import { request } from '../../scripts/lib/http.mjs';
import { readHealth } from './health.mjs';
import { cpuShare, measuredRun, minus } from './load.mjs';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { pinProcess } from './machine.mjs';
import { pinned, readPeakRss, resetPeakRss, startServer } from './process.mjs';
import { roundOrder } from './round-order.mjs';
import { getScenario, POPULAR_PRODUCTS, renderedPathAt, SHARED_HOST } from './scenarios.mjs';
import { checkScenario, judgeRun, NO_ANSWER } from './validate.mjs';
import { READY_LINE, ROOT, getVariant, variantEnv } from './variants.mjs';

export const SHARED_SCENARIO = 'ssr-shared';
/** Origin processes behind the load in a pair: the smallest number that can share anything. */
export const PROCESSES = 2;

/**
 * `processes`: origins behind the load; `loadAs`: the scenario whose requests (and so Host) load
 * them and whose check validates them: ssr-shared (one public Host for the pair) or ssr-cached
 * (the origin as the variant grid loads it, for a one-process row beside ssg and ssr-cached).
 * @typedef {'l1' | 'shared' | 'render'} Tier
 * @typedef {{ name: string, label: string, processes: number, loadAs: 'ssr-shared' | 'ssr-cached',
 *   redis: boolean, env: Record<string, string | undefined>, expect: Tier,
 *   warmupKind: 'files' | 'renders' }} Setup
 */

/** The pairs whose req/s are measured. `RENDER_CACHE_BYTES: undefined` = the default L1 whatever the shell says. */
/** @type {Setup[]} */
export const SETUPS = [
  {
    name: 'l1-hit',
    label: 'L1 hit (two processes, REDIS_URL set, in-process caches full)',
    processes: PROCESSES,
    loadAs: SHARED_SCENARIO,
    redis: true,
    env: { RENDER_CACHE_BYTES: undefined },
    expect: 'l1',
    warmupKind: 'files',
  },
  {
    // The same pair without REDIS_URL: beside l1-hit, what configuring the shared tier costs an L1
    // hit, with the same two processes sharing the same CPU (ssg is one process alone).
    name: 'l1-hit-no-redis',
    label: 'L1 hit without Redis (the same pair, no REDIS_URL)',
    processes: PROCESSES,
    loadAs: SHARED_SCENARIO,
    redis: false,
    env: { RENDER_CACHE_BYTES: undefined },
    expect: 'l1',
    warmupKind: 'files',
  },
  {
    name: 'shared-hit',
    label:
      'shared-tier hit (REDIS_URL, RENDER_CACHE_BYTES=1: every request an L1 miss answered by Redis)',
    processes: PROCESSES,
    loadAs: SHARED_SCENARIO,
    redis: true,
    env: { RENDER_CACHE_BYTES: '1' },
    expect: 'shared',
    warmupKind: 'files',
  },
  {
    name: 'miss',
    label: 'miss (RENDER_CACHE_BYTES=0: every request renders)',
    processes: PROCESSES,
    loadAs: SHARED_SCENARIO,
    redis: false,
    env: { RENDER_CACHE_BYTES: '0' },
    expect: 'render',
    warmupKind: 'renders',
  },
  {
    // The render cache's target is an L1 hit ≥ 0.8× ssg, and ssg is one process: this is one
    // origin with REDIS_URL, loaded as ssr-cached loads the origin (same requests, connections,
    // duration, Host), its caches filled as l1-hit's are. The pairs above share the server CPUs
    // between two processes and so cannot be held to a one-process figure.
    name: 'l1-hit-1p',
    label: 'L1 hit, one process with REDIS_URL (loaded as ssr-cached loads the origin)',
    processes: 1,
    loadAs: 'ssr-cached',
    redis: true,
    env: { RENDER_CACHE_BYTES: undefined },
    expect: 'l1',
    warmupKind: 'files',
  },
  {
    // The same process without REDIS_URL: what configuring the shared tier costs one process's L1
    // hit, and a check that these rows load the origin as ssr-cached does (same req/s, same run).
    name: 'l1-hit-1p-no-redis',
    label: 'L1 hit, one process without REDIS_URL (as ssr-cached)',
    processes: 1,
    loadAs: 'ssr-cached',
    redis: false,
    env: { RENDER_CACHE_BYTES: undefined },
    expect: 'l1',
    warmupKind: 'files',
  },
];

/** The Host each setup's requests carry: the pairs' public one, or (as ssr-cached) the server's own. */
const hostHeaders = (setup) => (setup.loadAs === SHARED_SCENARIO ? { host: SHARED_HOST } : {});

/** The renders-per-page measurements: a fresh pair with a fresh Redis, and one without. */
export const COUNTS = [
  { name: 'with-redis', label: 'with Redis', redis: true },
  { name: 'without-redis', label: 'without Redis', redis: false },
];

/** Seconds the whole scenario takes, roughly, for the runner's estimate. */
export function sharedSeconds({ duration, rounds, warmup, renderWarmup }, startupS) {
  const start = SETUPS.reduce((sum, setup) => sum + setup.processes * startupS, 0);
  const warmups = SETUPS.reduce(
    (sum, setup) => sum + (setup.warmupKind === 'renders' ? renderWarmup : warmup),
    0,
  );
  // Per round: two count pairs (start, load, sweep, stop) and the measured runs with their sweeps.
  const round =
    COUNTS.length * (PROCESSES * startupS + duration + 3) + SETUPS.length * (duration + 3);
  return start + warmups + rounds * round;
}

/** Each process's /healthz. */
async function health(servers) {
  const answers = [];
  for (const server of servers) answers.push(await readHealth(server.url));
  return answers;
}

/**
 * What these processes did so far, summed: renders begun (`renders.started`), and, with a shared
 * tier, its hits, lock waits (a process waiting for another's render) and requests that went on
 * without Redis (`skipped`, by reason).
 */
async function counters(servers) {
  const total = { renders: 0, sharedHits: 0, lockWaits: 0, skipped: 0 };
  for (const answer of await health(servers)) {
    total.renders += answer.renders.started;
    const shared = answer.sharedCache;
    if (shared) {
      total.sharedHits += shared.hits + shared.stale;
      total.lockWaits += shared.lockWaits;
      total.skipped += Object.values(shared.skipped ?? {}).reduce((sum, n) => sum + n, 0);
    }
  }
  return total;
}

/** How long an origin may take to connect to a local Redis before the setup counts as broken. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Waits until every process reports its shared tier ready. The origin connects in the background
 * and serves without Redis meanwhile (by design), so a measurement started earlier would count
 * the renders of that window as the tier's. Throws when it does not connect in time.
 */
async function untilSharedTierReady(servers) {
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  for (;;) {
    const states = (await health(servers)).map((answer) => answer.sharedCache?.state);
    if (states.every((state) => state === 'ready')) return;
    // No sharedCache at all: an origin without the shared tier (REDIS_URL ignored); nothing to wait for.
    if (states.every((state) => state === undefined)) return;
    if (Date.now() > deadline)
      throw new Error(
        `the shared tier did not connect in ${CONNECT_TIMEOUT_MS} ms (states: ${states.join(', ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Every popular page asked of each process once, one process after the other, with the load's Host.
 * @returns {Promise<string[]>} the pages not answered 200, with their statuses
 */
async function sweep(servers, headers = { host: SHARED_HOST }) {
  const refused = [];
  for (const server of servers) {
    for (let k = 0; k < POPULAR_PRODUCTS; k++) {
      const path = renderedPathAt(k);
      const answer = await request(server.url, path, { headers, timeoutMs: 30_000 });
      if (answer.status !== 200) refused.push(`${path}: ${answer.status}`);
    }
  }
  return refused;
}

/**
 * The servers' logged errors (their output's last lines at pino's error or fatal level: 50, 60),
 * to say why a page failed.
 */
function errorLines(servers) {
  const lines = servers.flatMap((server) =>
    server
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)\b/.test(line))
      .slice(-2),
  );
  return lines.length ? `\n${lines.join('\n')}` : '';
}

/** Empties a local Redis (FLUSHALL, spoken in RESP over a socket: no client library for one command). */
function flushRedis(port) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const timer = setTimeout(() => socket.destroy(new Error('FLUSHALL: no answer in 5 s')), 5000);
    socket.on('connect', () => socket.write('*1\r\n$8\r\nFLUSHALL\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (!reply.includes('\r\n')) return;
      clearTimeout(timer);
      socket.end();
      if (reply.startsWith('+OK')) resolve(undefined);
      else reject(new Error(`FLUSHALL: ${reply.trim()}`));
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Empties each process's own render cache (SIGHUP) and waits until /healthz shows it empty. */
async function purgeL1(servers) {
  for (const server of servers) process.kill(server.pid, 'SIGHUP');
  const deadline = Date.now() + 5000;
  for (;;) {
    const entries = (await health(servers)).map((answer) => answer.renderCache?.entries ?? 0);
    if (entries.every((count) => count === 0)) return;
    if (Date.now() > deadline)
      throw new Error(`SIGHUP left ${entries.join(', ')} entries in the render caches`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cache-Status of one popular page from each process, asked with the load's Host. */
async function sampleCacheStatus(servers, headers = { host: SHARED_HOST }) {
  const statuses = [];
  for (const server of servers) {
    const res = await request(server.url, renderedPathAt(0), { headers });
    statuses.push(String(res.headers['cache-status'] ?? '(none)'));
  }
  return statuses;
}

/**
 * @param {{ options: ReturnType<typeof import('./options.mjs').parseOptions>, pin: { enabled: boolean, serverCpus: string },
 *   load: Awaited<ReturnType<typeof import('./load.mjs').startLoadGenerator>>,
 *   progress: ReturnType<typeof import('./progress.mjs').createProgress>,
 *   build: import('./scenarios.mjs').BuildInfo, settle: () => Promise<void>, requestTimeout: number,
 *   env?: Record<string, string | undefined> }} context (env: every origin's, where its renders'
 *   data comes from: bench/lib/data-upstream.mjs)
 */
export function createSharedBench({
  options,
  pin,
  load,
  progress,
  build,
  settle,
  requestTimeout,
  env: dataEnv = {},
}) {
  const origin = getVariant('origin');
  const requestsOf = (setup) => getScenario(setup.loadAs).requests(build, {});
  const requests = getScenario(SHARED_SCENARIO).requests(build, {});
  /** Redis and the origins run where the servers run: their CPU is the server side's. */
  const pinServer = (pid) => {
    if (pin.enabled && pid) pinProcess(pid, pin.serverCpus);
  };

  /** @type {Map<string, { started: boolean, error?: string, servers: import('./process.mjs').RunningServer[], check?: import('./validate.mjs').ScenarioCheck, warmed: boolean, crashed?: string }>} */
  const pairs = new Map();
  /** @type {Awaited<ReturnType<typeof startRedis>> | undefined} */
  let redis;
  let redisError;
  /** Every process this scenario started and has not stopped yet (the runner settles on them). */
  const live = new Set();
  const runs = [];
  const counts = [];

  const startPair = async (env, redisUrl, processes = PROCESSES) => {
    const command = origin.command();
    const servers = [];
    try {
      for (let i = 0; i < processes; i++) {
        const server = await startServer({
          command: pin.enabled ? pinned(command, pin.serverCpus) : command,
          // REDIS_URL: undefined removes one the shell may have set from the pairs without Redis.
          env: { ...variantEnv(origin, 1), ...dataEnv, ...env, REDIS_URL: redisUrl },
          cwd: ROOT,
          ready: READY_LINE,
        });
        servers.push(server);
        live.add(server);
      }
    } catch (error) {
      await stopAll(servers);
      throw error;
    }
    return servers;
  };
  const stopAll = async (servers) => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const server of servers) live.delete(server);
  };
  const crashReason = (servers) => {
    for (const server of servers) {
      const exit = server.exited();
      if (exit)
        return `an origin exited (${exit.signal ?? `code ${exit.code}`}): ${server.output().trim().split('\n').slice(-3).join(' / ')}`;
    }
    return undefined;
  };

  /** Starts Redis and the measured setups' processes, and checks each process's answers. */
  const start = async () => {
    if (SETUPS.some((setup) => setup.redis)) {
      try {
        redis = await startRedis();
        pinServer(redis.pid);
      } catch (error) {
        redisError = error instanceof Error ? error.message : String(error);
        progress.log(`✗ ${SHARED_SCENARIO}: redis-server did not start: ${redisError}`);
      }
    }
    for (const setup of SETUPS) {
      progress.step(`starting ${SHARED_SCENARIO} · ${setup.name}`, 3);
      const pair = { started: false, servers: [], warmed: false };
      pairs.set(setup.name, pair);
      if (setup.redis && !redis) {
        pair.error = `no Redis: ${redisError}`;
        continue;
      }
      try {
        pair.servers = await startPair(
          setup.env,
          setup.redis ? redis.url : undefined,
          setup.processes,
        );
        if (setup.redis) await untilSharedTierReady(pair.servers);
        pair.started = true;
      } catch (error) {
        pair.error = error instanceof Error ? error.message : String(error);
        progress.log(`✗ ${SHARED_SCENARIO} · ${setup.name} did not start: ${pair.error}`);
        continue;
      }
      // Every process must answer the popular pages as the page they are (twice each, so the
      // second answer comes from whatever cache the setup has, Redis included).
      const checks = [];
      for (const server of pair.servers)
        checks.push(await checkScenario(server.url, setup.loadAs, build));
      pair.check = {
        ...checks[0],
        valid: checks.every((check) => check.valid),
        problems: checks.flatMap((check, i) => check.problems.map((p) => `process ${i + 1}: ${p}`)),
        minBytesPerResponse: Math.min(...checks.map((check) => check.minBytesPerResponse)),
      };
      progress.log(
        `✓ ${SHARED_SCENARIO} · ${setup.name}: ${setup.processes} origin${setup.processes > 1 ? 's' : ''} (pids ${pair.servers.map((s) => s.pid).join(', ')})${setup.redis ? ` + redis-server (pid ${redis.pid})` : ''} · ${pair.check.valid ? 'ok' : `INVALID: ${pair.check.problems.join('; ')}`}`,
      );
    }
  };

  /** One renders-per-page measurement on fresh processes (and a fresh Redis). */
  const count = async (spec, round) => {
    progress.step(
      `round ${round}/${options.rounds} · ${SHARED_SCENARIO} · renders per page ${spec.label}`,
      2 * 2 + options.duration + 3,
    );
    const record = { round, name: spec.name, pages: POPULAR_PRODUCTS, problems: [] };
    let fresh;
    let servers = [];
    try {
      if (spec.redis) {
        fresh = await startRedis();
        pinServer(fresh.pid);
      }
      // The default L1 (RENDER_CACHE_BYTES as users run it): only the sharing differs.
      servers = await startPair({ RENDER_CACHE_BYTES: undefined }, fresh?.url);
      if (fresh) await untilSharedTierReady(servers);
      await settle();
      const before = await counters(servers);
      const result = await load.run({
        url: servers[0].url,
        urls: servers.map((server) => server.url),
        requests,
        connections: options.connections,
        pipelining: options.pipelining,
        timeout: requestTimeout,
        duration: options.duration,
      });
      // However far each connection got through the list, every page is now asked of both, and
      // each must be answered. The load only races the first misses: on a starved machine a short
      // run may end before any render does, and its renders go on and are counted all the same.
      const refused = await sweep(servers);
      const done = minus(await counters(servers), before);
      Object.assign(record, done);
      record.rendersPerPage = done.renders / record.pages;
      record.requests = result.requests;
      record.problems.push(
        ...judgeRun(result, { expectedStatuses: [200], minBytesPerResponse: 0 }).filter(
          (problem) => problem !== NO_ANSWER,
        ),
      );
      if (refused.length)
        record.problems.push(`sweep: ${refused.slice(0, 3).join(', ')}${errorLines(servers)}`);
      record.cacheStatus = await sampleCacheStatus(servers);
      const died = crashReason(servers);
      if (died) record.problems.push(died);
    } catch (error) {
      record.problems.push(error instanceof Error ? error.message : String(error));
    } finally {
      await stopAll(servers);
      await fresh?.close();
    }
    counts.push(record);
    progress.log(
      `  r${round} ${SHARED_SCENARIO} renders per distinct page ${spec.label.padEnd(14)} ` +
        (record.rendersPerPage === undefined
          ? '?'
          : `${record.rendersPerPage.toFixed(2)} (${record.renders} renders, ${record.pages} pages; ${record.lockWaits} lock waits, ${record.sharedHits} shared hits, ${record.skipped} Redis skips)`) +
        (record.problems.length ? ` ✗ ${record.problems.join('; ')}` : ''),
    );
  };

  /** One measured run of a long-lived pair. */
  const measure = async (setup, round) => {
    const pair = pairs.get(setup.name);
    if (!pair?.started || pair.crashed || !pair.check?.valid) return;
    const { servers } = pair;
    const headers = hostHeaders(setup);
    const job = {
      url: servers[0].url,
      // One process: the load as the variant grid gives it (one autocannon instance, one url).
      ...(servers.length > 1 ? { urls: servers.map((server) => server.url) } : {}),
      requests: requestsOf(setup),
      connections: options.connections,
      pipelining: options.pipelining,
      timeout: requestTimeout,
    };
    const cached = setup.expect !== 'render';
    // Every run starts with every entry just stored: emptied (the L1s, Redis) and filled again by
    // one sweep, whose renders belong to no measured run. Rounds here come about a minute apart,
    // s-maxage is 60 s: entries kept from the last round would turn stale during the run, and
    // their refreshes and stale answers would be measured as hits.
    if (cached) {
      await purgeL1(servers);
      if (setup.redis) await flushRedis(redis.port);
      await sweep(servers, headers);
    }
    const warmup = setup.warmupKind === 'renders' ? options.renderWarmup : options.warmup;
    if (!pair.warmed && warmup > 0) {
      await settle();
      progress.step(
        `round ${round}/${options.rounds} · ${SHARED_SCENARIO} · ${setup.name} · warm-up`,
        warmup,
      );
      await load.run({ ...job, duration: warmup });
    }
    pair.warmed = true;
    await settle();
    // Which tier answers this setup, asked while nothing else runs: a sample after the load could
    // land in the second a saturated process's circuit breaker stays open (its counters, below, say
    // how many requests of the run went on without Redis).
    const cacheStatus = await sampleCacheStatus(servers, headers);
    progress.step(
      `round ${round}/${options.rounds} · ${SHARED_SCENARIO} · ${setup.name} · measuring`,
      options.duration + 1,
    );
    const pids = servers.map((server) => server.pid);
    const redisPid = setup.redis ? redis?.pid : undefined;
    for (const pid of pids) resetPeakRss(pid);
    const {
      result,
      cpuSeconds,
      counted: done,
      lengthenedTo,
    } = await measuredRun((duration) => load.run({ ...job, duration }), {
      pids: redisPid ? [...pids, redisPid] : pids,
      count: async () => {
        const before = await counters(servers);
        return async () => minus(await counters(servers), before);
      },
      duration: options.duration,
      settle,
      log: progress.log,
    });
    const seconds = result.duration;
    const originCpu = cpuShare(cpuSeconds.slice(0, pids.length), seconds);
    const redisCpu = redisPid ? cpuShare(cpuSeconds.slice(pids.length), seconds) : undefined;
    const problems = judgeRun(result, pair.check);
    const died = crashReason(servers);
    if (died) {
      pair.crashed = died;
      problems.push(died);
    } else {
      for (const server of servers) {
        const after = await checkScenario(server.url, setup.loadAs, build);
        if (!after.valid)
          problems.push(...after.problems.map((problem) => `after load: ${problem}`));
      }
    }
    const peaks = pids.map((pid) => readPeakRss(pid)).filter((value) => value !== undefined);
    runs.push({
      round,
      setup: setup.name,
      result,
      // The server side of a shared hit is the origins and Redis together.
      serverCpu: originCpu === undefined ? undefined : originCpu + (redisCpu ?? 0),
      originCpu,
      redisCpu,
      ...done,
      lengthenedTo,
      cacheStatus,
      peakRss: peaks.length ? peaks.reduce((sum, value) => sum + value, 0) : undefined,
      problems,
    });
    progress.log(
      `  r${round} ${SHARED_SCENARIO} ${setup.name.padEnd(18)} ${Math.round(result.rps).toString().padStart(7)} req/s, ` +
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, CPU server ${originCpu === undefined ? '?' : Math.round((originCpu + (redisCpu ?? 0)) * 100)}% / load ${Math.round(result.loadCpu * 100)}%, ` +
        `${done.renders} renders, ${done.sharedHits} shared hits, ${done.skipped} Redis skips, Cache-Status "${cacheStatus[0]}"` +
        (problems.length ? ` ✗ ${problems.join('; ')}` : ''),
    );
  };

  return {
    start,
    /** Pids of every process of the scenario still running (servers, Redis). */
    pids: () => [
      ...[...live].filter((server) => !server.exited()).map((server) => server.pid),
      ...(redis?.pid ? [redis.pid] : []),
    ],
    /** The scenario's share of one round, its parts in a Williams order that changes per round. */
    round: async (round) => {
      for (const spec of roundOrder(COUNTS, round - 1)) await count(spec, round);
      for (const setup of roundOrder(SETUPS, round - 1)) await measure(setup, round);
    },
    /** What the report and the JSON need. */
    results: () => ({
      setups: SETUPS.map((setup) => {
        const pair = pairs.get(setup.name);
        return {
          name: setup.name,
          label: setup.label,
          processes: setup.processes,
          loadAs: setup.loadAs,
          expect: setup.expect,
          started: Boolean(pair?.started),
          error: pair?.error,
          crashed: pair?.crashed,
          pids: pair?.servers.map((server) => server.pid) ?? [],
          check: pair?.check,
        };
      }),
      redisPid: redis?.pid,
      runs,
      counts,
    }),
    close: async () => {
      await stopAll([...live]);
      await redis?.close();
    },
  };
}
