// ssr-shared's figures, from its raw runs: medians per setup, renders per distinct page, the ratios
// the shared render cache is held to, and the same summary as a terminal table and as Markdown.
import { median, medianAndRange } from '../../scripts/lib/median.mjs';
import { result, setupMarkdownTables, setupTerminal } from './setup-table.mjs';

/** Renders per response at or under this: the run was answered from a cache (a refresh may slip in). */
const CACHED_RENDERS_PER_RESPONSE = 0.01;
/** At or over this: the run rendered (nearly) every request. */
const RENDERED_RENDERS_PER_RESPONSE = 0.9;
/**
 * The targets of the issue: a shared hit ≥ 10× a render's req/s; an L1 hit ≥ 0.8× ssg, held by
 * the one-process row (l1-hit-1p) since ssg is one process.
 */
export const SHARED_VS_MISS_TARGET = 10;
export const L1_VS_SSG_TARGET = 0.8;

const TIER_NAMES = {
  l1: 'L1 (render-cache hit)',
  shared: 'shared tier (shared-cache hit)',
  render: 'a render',
};

/**
 * @typedef {ReturnType<ReturnType<typeof import('./shared-tier.mjs').createSharedBench>['results']>} SharedResults
 */

/** Whether a run was answered by the tier its setup names: by its renders and its Cache-Status. */
function answeredAsExpected(expect, run) {
  const perResponse = run.result.requests > 0 ? run.renders / run.result.requests : undefined;
  const tiers = run.cacheStatus.map((value) => tierOfStatus(value));
  if (expect === 'render')
    return perResponse !== undefined && perResponse >= RENDERED_RENDERS_PER_RESPONSE
      ? undefined
      : `only ${perResponse?.toFixed(2)} renders per response`;
  const wrong = tiers.filter((tier) => tier !== expect);
  if (perResponse === undefined || perResponse > CACHED_RENDERS_PER_RESPONSE)
    return `${perResponse?.toFixed(2)} renders per response: not answered by ${TIER_NAMES[expect]}`;
  if (wrong.length)
    return `Cache-Status "${run.cacheStatus[tiers.indexOf(wrong[0])]}": not ${TIER_NAMES[expect]}`;
  return undefined;
}

/** Which tier answered, from a Cache-Status value (RFC 9211: one entry per cache, any order). */
export function tierOfStatus(cacheStatus) {
  if (/(?:^|,)\s*render-cache;\s*hit\b/.test(cacheStatus ?? '')) return 'l1';
  if (/(?:^|,)\s*shared-cache;\s*hit\b/.test(cacheStatus ?? '')) return 'shared';
  return 'render';
}

/**
 * @param {{ shared: SharedResults, rows: import('./report.mjs').SummaryRow[], rounds: number }} input
 */
export function summarizeShared({ shared, rows, rounds }) {
  const setups = shared.setups.map((setup) => {
    const own = shared.runs.filter((run) => run.setup === setup.name);
    const row = {
      setup: setup.name,
      label: setup.label,
      processes: setup.processes,
      expect: setup.expect,
      status: 'valid',
      reasons: [],
      rounds: own.length,
      errors: own.reduce((sum, run) => sum + run.result.errors, 0),
      badStatuses: own.reduce(
        (sum, run) =>
          sum +
          Object.entries(run.result.statusCodes)
            .filter(([code]) => !/^2\d\d$|^304$/.test(code))
            .reduce((total, [, count]) => total + count, 0),
        0,
      ),
      // Distinct answers, their ages aside.
      cacheStatus: [
        ...new Set(
          own.flatMap((run) => run.cacheStatus.map((v) => v.replace(/ttl=-?\d+/g, 'ttl=n'))),
        ),
      ],
    };
    if (!setup.started) {
      row.status = 'failed';
      row.reasons.push(`did not start: ${setup.error}`);
    } else if (setup.check && !setup.check.valid) {
      row.status = 'invalid';
      row.reasons.push(...setup.check.problems);
    }
    for (const run of own)
      for (const problem of run.problems) row.reasons.push(`round ${run.round}: ${problem}`);
    if (row.status === 'valid' && own.some((run) => run.problems.length > 0))
      row.status = 'invalid';
    if (row.status === 'valid' && own.length < rounds) {
      row.status = 'failed';
      row.reasons.push(setup.crashed ?? `only ${own.length} of ${rounds} rounds ran`);
    }
    // Measured, but not what the row names (e.g. "shared-tier hit" while no shared tier answers).
    const mismatches = own.map((run) => answeredAsExpected(setup.expect, run)).filter(Boolean);
    row.answeredAsExpected = own.length > 0 && mismatches.length === 0;
    if (mismatches.length) row.mismatch = mismatches[0];
    if (own.length > 0) {
      const values = own.map((run) => run.result.rps);
      row.rps = medianAndRange(values);
      row.latencyP50 = median(own.map((run) => run.result.latency.p50));
      row.latencyP99 = median(own.map((run) => run.result.latency.p99));
      const per = (pick) =>
        median(own.map((run) => (run.result.requests > 0 ? pick(run) / run.result.requests : 0)));
      row.rendersPerResponse = per((run) => run.renders);
      row.redisSkipsPerResponse = per((run) => run.skipped ?? 0);
      const defined = (pick) => own.map(pick).filter((value) => value !== undefined);
      row.serverCpu = median(defined((run) => run.serverCpu));
      row.loadCpu = median(own.map((run) => run.result.loadCpu));
      const perResponse = (pick) =>
        median(
          own
            .filter((run) => pick(run) !== undefined && run.result.rps > 0)
            .map((run) => (pick(run) / run.result.rps) * 1e6),
        );
      row.serverUsPerResponse = perResponse((run) => run.serverCpu);
      row.redisUsPerResponse = perResponse((run) => run.redisCpu);
      const peaks = defined((run) => run.peakRss);
      row.peakRss = peaks.length ? Math.max(...peaks) : undefined;
    }
    return row;
  });

  const renders = Object.fromEntries(
    ['with-redis', 'without-redis'].map((name) => {
      const own = shared.counts.filter((count) => count.name === name);
      const measured = own.filter(
        (count) => count.problems.length === 0 && count.rendersPerPage !== undefined,
      );
      const values = measured.map((count) => count.rendersPerPage);
      return [
        name,
        {
          rounds: own.length,
          values,
          median: values.length ? median(values) : undefined,
          renders: measured.map((count) => count.renders),
          lockWaits: measured.map((count) => count.lockWaits),
          sharedHits: measured.map((count) => count.sharedHits),
          pages: own[0]?.pages,
          problems: own.flatMap((count) =>
            count.problems.map((problem) => `round ${count.round}: ${problem}`),
          ),
        },
      ];
    }),
  );

  const find = (name) =>
    setups.find((row) => row.setup === name && row.status === 'valid' && row.rps);
  const l1 = find('l1-hit');
  const l1OneProcess = find('l1-hit-1p');
  const sharedHit = find('shared-hit');
  const miss = find('miss');
  const ssg = rows.find(
    (row) =>
      row.scenario === 'ssg' && row.variant === 'origin' && row.status === 'valid' && row.rps,
  );
  const cachedRow = rows.find(
    (row) =>
      row.scenario === 'ssr-cached' &&
      row.variant === 'origin' &&
      row.status === 'valid' &&
      row.rps,
  );
  const withRedis = renders['with-redis'];
  const withoutRedis = renders['without-redis'];
  const targets = [
    {
      name: 'renders per distinct page with Redis',
      target: '1.00',
      value: withRedis.median,
      text:
        withRedis.median === undefined
          ? '–'
          : `${withRedis.median.toFixed(2)} (renders per round: ${withRedis.renders.join(', ')}; lock waits: ${withRedis.lockWaits.join(', ')})`,
      met: withRedis.median === undefined ? undefined : withRedis.median <= 1,
      why: withRedis.median === undefined ? (withRedis.problems[0] ?? 'not measured') : undefined,
    },
    {
      name: 'renders per distinct page without Redis',
      target: `~${2}.00 (each process renders each page once)`,
      value: withoutRedis.median,
      text: withoutRedis.median === undefined ? '–' : withoutRedis.median.toFixed(2),
      reference: true,
      met: withoutRedis.median === undefined ? undefined : Math.abs(withoutRedis.median - 2) <= 0.1,
      why:
        withoutRedis.median === undefined
          ? (withoutRedis.problems[0] ?? 'not measured')
          : undefined,
    },
    ratioTarget({
      name: 'shared-tier hit ÷ miss req/s',
      target: SHARED_VS_MISS_TARGET,
      top: sharedHit,
      bottom: miss,
      missing: !sharedHit ? 'no valid shared-hit row' : !miss ? 'no valid miss row' : undefined,
    }),
    // One process against one: ssg is the origin alone on the server CPUs, so is l1-hit-1p.
    ratioTarget({
      name: 'L1 hit, one process with Redis ÷ origin ssg req/s',
      target: L1_VS_SSG_TARGET,
      top: l1OneProcess,
      bottom: ssg,
      missing: !l1OneProcess
        ? 'no valid l1-hit-1p row'
        : !ssg
          ? 'ssg (origin) not in this run: add --scenarios …,ssg'
          : undefined,
    }),
  ];
  const info = [];
  const l1OneAlone = find('l1-hit-1p-no-redis');
  if (l1OneProcess && l1OneAlone)
    info.push(
      `L1 hit, one process, with Redis ÷ without: ${(l1OneProcess.rps.median / l1OneAlone.rps.median).toFixed(2)}× req/s, ` +
        `${num(l1OneProcess.serverUsPerResponse)} against ${num(l1OneAlone.serverUsPerResponse)} µs of server CPU per response`,
    );
  // Server CPU per response does not depend on who else used the CPU during the run: where req/s
  // swing on a busy machine, this is the steadier comparison of an L1 hit with a prerendered page.
  if (l1OneProcess && ssg && l1OneProcess.serverUsPerResponse && ssg.serverUsPerResponse)
    info.push(
      `server CPU per response, L1 hit one process with Redis ÷ origin ssg: ${(l1OneProcess.serverUsPerResponse / ssg.serverUsPerResponse).toFixed(2)}× (${num(l1OneProcess.serverUsPerResponse)} against ${num(ssg.serverUsPerResponse)} µs)`,
    );
  // The same load on the same process as ssr-cached: near 1 unless the machine changed between runs.
  if (l1OneAlone && cachedRow)
    info.push(
      `L1 hit, one process without Redis ÷ origin ssr-cached req/s (the same load and process): ${(l1OneAlone.rps.median / cachedRow.rps.median).toFixed(2)}×`,
    );
  // The pairs: two processes sharing the server CPUs, against one process (ssg, ssr-cached). Not
  // the target (which compares one process with one); what a second replica on the same CPUs costs.
  const l1Alone = find('l1-hit-no-redis');
  if (l1 && l1Alone)
    info.push(
      `L1 hit, two processes, with Redis ÷ without (the same pair): ${(l1.rps.median / l1Alone.rps.median).toFixed(2)}× req/s, ` +
        `${num(l1.serverUsPerResponse)} against ${num(l1Alone.serverUsPerResponse)} µs of server CPU per response`,
    );
  if (l1 && ssg)
    info.push(
      `L1 hit, two processes with Redis ÷ origin ssg (one process) req/s: ${(l1.rps.median / ssg.rps.median).toFixed(2)}× (two processes share the server CPUs: not the target's comparison)`,
    );
  if (l1 && ssg && l1.serverUsPerResponse && ssg.serverUsPerResponse)
    info.push(
      `server CPU per response, L1 hit two processes with Redis ÷ origin ssg (one process): ${(l1.serverUsPerResponse / ssg.serverUsPerResponse).toFixed(2)}× (${num(l1.serverUsPerResponse)} against ${num(ssg.serverUsPerResponse)} µs)`,
    );
  if (l1 && cachedRow)
    info.push(
      `L1 hit, two processes with Redis ÷ origin ssr-cached (one process) req/s: ${(l1.rps.median / cachedRow.rps.median).toFixed(2)}×`,
    );
  if (sharedHit && miss && sharedHit.serverUsPerResponse && miss.serverUsPerResponse)
    info.push(
      `server CPU per response, miss ÷ shared-tier hit: ${(miss.serverUsPerResponse / sharedHit.serverUsPerResponse).toFixed(1)}×`,
    );
  return { setups, renders, targets, info };
}

/** A req/s ratio held to a target, "not met" also when a row is not what it names. */
function ratioTarget({ name, target, top, bottom, missing }) {
  if (missing)
    return { name, target: `≥ ${target.toFixed(2)}`, text: '–', met: undefined, why: missing };
  const value = top.rps.median / bottom.rps.median;
  const notAsNamed = [top, bottom].find((row) => row.answeredAsExpected === false);
  return {
    name,
    target: `≥ ${target.toFixed(2)}`,
    value,
    text: `${value.toFixed(2)}×`,
    met: notAsNamed ? false : value >= target,
    why: notAsNamed ? `the ${notAsNamed.setup} row was ${notAsNamed.mismatch}` : undefined,
  };
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const num = (value, digits = 1) =>
  value === undefined ? '–' : value < 100 ? value.toFixed(digits) : integer.format(value);
// autocannon records whole milliseconds: 0 means "under a millisecond".
const ms = (value) =>
  value === undefined
    ? '–'
    : value < 1
      ? '<1'
      : value < 10
        ? String(Math.round(value * 10) / 10)
        : integer.format(value);
const spread = (rps) =>
  !rps || rps.values.length < 2
    ? '–'
    : `±${Math.round(((rps.max - rps.min) / 2 / rps.median) * 100)}%`;

const HEADERS = [
  'setup',
  'procs',
  'req/s',
  'spread',
  'p50 ms',
  'p99 ms',
  'errors',
  'non-2xx/304',
  'renders/resp',
  'Redis skips/resp',
  'CPU srv/load',
  'srv µs/resp',
  'of it Redis µs',
  'result',
];

function cells(row) {
  const valid = row.status === 'valid';
  return [
    row.setup,
    String(row.processes),
    valid ? num(row.rps?.median) : '–',
    valid ? spread(row.rps) : '–',
    ms(row.latencyP50),
    ms(row.latencyP99),
    row.rounds ? String(row.errors) : '–',
    row.rounds ? String(row.badStatuses) : '–',
    row.rendersPerResponse === undefined ? '–' : row.rendersPerResponse.toFixed(2),
    row.redisSkipsPerResponse === undefined || row.expect === 'render'
      ? '–'
      : row.redisSkipsPerResponse.toFixed(3),
    row.serverCpu === undefined
      ? '–'
      : `${Math.round(row.serverCpu * 100)}/${Math.round(row.loadCpu * 100)}%`,
    num(row.serverUsPerResponse),
    num(row.redisUsPerResponse),
    result(row),
  ];
}

/** The scenario's lines for the terminal. */
export function sharedTerminal(summary, title) {
  return setupTerminal(summary, { title, headers: HEADERS, cells, textColumns: 1 });
}

/** The scenario's section of the Markdown report. */
export function sharedMarkdown(summary, { title, describe }) {
  return [
    '',
    `**${title}**`,
    '',
    ...setupMarkdownTables(summary, { headers: HEADERS, cells, textColumns: 1 }),
    '',
    `${describe} ` +
      'procs: origin processes behind the load (2: a pair sharing the server CPUs, one public Host; 1: loaded as ssr-cached loads the origin, comparable with ssg and ssr-cached); ' +
      'req/s: the setup\'s processes together, median of the rounds; server CPU: its origins plus Redis (the "of it Redis" column), per response; ' +
      'renders/resp: renders the run started (from every /healthz) per response, ~0 for a cache hit and ~1 for a miss (renders still in flight when the load stops count too, so a miss shows more than 1); ' +
      'Redis skips/resp: requests that went on without Redis (timeout, error, circuit breaker open; each then renders); ' +
      'Cache-Status is sampled from each process just before each run; ' +
      'the L1 target (≥ 0.80× ssg) is held by l1-hit-1p, one process against one; the two-process ratios are information; ' +
      '"NOT AS NAMED": the run was not answered by the tier its row names (by its renders or its Cache-Status), so its ratio is not met. ' +
      `Cache-Status seen: ${summary.setups.map((row) => `${row.setup} \`${row.cacheStatus.join('`, `') || '–'}\``).join('; ')}.` +
      (summary.info.length ? ` ${summary.info.join('; ')}.` : ''),
  ];
}
