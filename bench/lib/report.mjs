// From raw runs to what a reader sees: medians per variant and scenario, ratios, validity, and the
// same summary as a terminal table and as Markdown. Nothing here measures; nothing is typed by hand.
import { median, medianAndRange } from '../../scripts/lib/median.mjs';
import { pairedTable } from './paired-cpu.mjs';

/**
 * @typedef {import('./load.mjs').LoadResult} LoadResult
 * @typedef {import('./validate.mjs').ScenarioCheck} ScenarioCheck
 * @typedef {{ round: number, scenario: string, variant: string, result: LoadResult, serverCpu?: number,
 *   peakRss?: number, upstreamRequests?: number, problems: string[] }} Run
 *   (upstreamRequests: what reached the process's API during the run, bench/lib/data-upstream.mjs)
 * @typedef {{ name: string, label: string, started: boolean, error?: string, crashed?: string,
 *   checks: Record<string, ScenarioCheck>, bursts?: Record<string, Burst> }} VariantState
 * @typedef {{ pages: number, statuses: Record<string, number>, notRendered: number,
 *   upstreamRequests: number,
 *   byPath: Record<string, number>, mostAsked: { path: string, requests: number } }} Burst (a
 *   burst of distinct pages on a fresh process: what reached its API, by path)
 * @typedef {{ scenario: string, variant: string, status: 'valid' | 'invalid' | 'unsupported' | 'failed', reasons: string[],
 *   notes: string[], revalidation?: string, rounds: number, rps?: { median: number, min: number, max: number, values: number[] },
 *   latencyP50?: number, latencyP99?: number, errors: number, badStatuses: number, bytesPerResponse?: number,
 *   peakRss?: number, serverCpu?: number, loadCpu?: number, serverUsPerResponse?: number, vsStock?: number, vsCeiling?: number, rank?: number,
 *   upstreamPerPage?: number }} SummaryRow (upstreamPerPage: what reached the API per answer of the
 *   fixed-rate runs, addUpstreamPerPage)
 * @typedef {{ round: number, scenario: string, variant: string, rate: number, result: LoadResult,
 *   upstreamRequests?: number, problems: string[] }} EqualLoadRun
 */

export { median };

/** Statuses that are neither success nor "not modified": what the table counts as non-2xx/304. */
function badStatusCount(statusCodes) {
  return Object.entries(statusCodes).reduce(
    (sum, [code, count]) => (/^2\d\d$|^304$/.test(code) ? sum : sum + count),
    0,
  );
}

/**
 * @param {{ scenarios: string[], variants: VariantState[], runs: Run[], rounds: number }} input
 * @returns {SummaryRow[]}
 */
export function summarize({ scenarios, variants, runs, rounds }) {
  /** @type {SummaryRow[]} */
  const rows = [];
  for (const scenario of scenarios) {
    for (const variant of variants) {
      const check = variant.checks[scenario];
      const own = runs.filter((run) => run.scenario === scenario && run.variant === variant.name);
      /** @type {SummaryRow} */
      const row = {
        scenario,
        variant: variant.name,
        status: 'valid',
        reasons: [],
        notes: [...(check?.notes ?? [])],
        revalidation: check?.revalidation,
        rounds: own.length,
        errors: 0,
        badStatuses: 0,
      };
      if (!variant.started) {
        row.status = 'failed';
        row.reasons.push(`did not start: ${variant.error}`);
      } else if (check && !check.valid) {
        // unsupported: a peer that cannot serve the app's routes as declared (bench/run.mjs).
        row.status = check.unsupported ? 'unsupported' : 'invalid';
        row.reasons.push(...check.problems);
      }
      for (const run of own) {
        for (const problem of run.problems) row.reasons.push(`round ${run.round}: ${problem}`);
      }
      if (row.status === 'valid' && own.some((run) => run.problems.length > 0))
        row.status = 'invalid';
      if (row.status === 'valid' && own.length < rounds) {
        row.status = 'failed';
        row.reasons.push(
          variant.crashed
            ? `stopped after ${own.length} of ${rounds} rounds: ${variant.crashed}`
            : `only ${own.length} of ${rounds} rounds ran`,
        );
      }
      if (own.length > 0) {
        const values = own.map((run) => run.result.rps);
        row.rps = medianAndRange(values);
        // A run without a single response has no latency: a 0 there would look like the fastest.
        const answered = own.filter((run) => run.result.requests > 0);
        row.latencyP50 = median(answered.map((run) => run.result.latency.p50));
        row.latencyP99 = median(answered.map((run) => run.result.latency.p99));
        row.errors = own.reduce((sum, run) => sum + run.result.errors, 0);
        row.badStatuses = own.reduce((sum, run) => sum + badStatusCount(run.result.statusCodes), 0);
        row.bytesPerResponse = median(
          own
            .filter((run) => run.result.requests > 0)
            .map((run) => run.result.bytes / run.result.requests),
        );
        row.serverCpu = median(
          own.map((run) => run.serverCpu).filter((value) => value !== undefined),
        );
        row.loadCpu = median(own.map((run) => run.result.loadCpu));
        // Server CPU time per response: still comparable when the load generator, not the server,
        // limits req/s (client-bound rows).
        const costs = own
          .filter((run) => run.serverCpu !== undefined && run.result.rps > 0)
          .map((run) => (run.serverCpu / run.result.rps) * 1e6);
        row.serverUsPerResponse = costs.length ? median(costs) : undefined;
        if (scenario === 'ssr-visitors') {
          // Every request of it is a visitor's (a rotating request): the share a cache answered.
          const requests = own.reduce((sum, run) => sum + run.result.requests, 0);
          const hits = own.reduce((sum, run) => sum + (run.result.cacheHits ?? 0), 0);
          row.hitRatio = requests > 0 ? hits / requests : undefined;
        }
        const peaks = own.map((run) => run.peakRss).filter((value) => value !== undefined);
        row.peakRss = peaks.length ? Math.max(...peaks) : undefined;
      }
      rows.push(row);
    }
  }
  // Ratios and ranks only between valid rows of the same scenario.
  for (const scenario of scenarios) {
    const group = rows.filter((row) => row.scenario === scenario);
    const valid = (name) =>
      group.find((row) => row.variant === name && row.status === 'valid' && row.rps);
    const stock = valid('stock');
    const ceiling = valid('ceiling');
    for (const row of group) {
      if (row.status !== 'valid' || !row.rps) continue;
      if (stock) row.vsStock = row.rps.median / stock.rps.median;
      if (ceiling) row.vsCeiling = row.rps.median / ceiling.rps.median;
    }
    group
      .filter((row) => row.status === 'valid' && row.rps && row.variant !== 'ceiling')
      .sort((a, b) => b.rps.median - a.rps.median)
      .forEach((row, index) => (row.rank = index + 1));
  }
  return rows;
}

/**
 * What reached each process's API per answer, from the fixed-rate runs: every request they send is
 * answered before the count is read (open-loop.mjs waits for them), so none is counted whose page
 * is not, as flat-out runs would (autocannon leaves the requests in flight when it stops, and the
 * server still renders them). Each row of a scenario and variant with such runs gets it.
 * @param {SummaryRow[]} rows @param {EqualLoadRun[]} equalLoadRuns
 */
export function addUpstreamPerPage(rows, equalLoadRuns) {
  for (const row of rows) {
    const own = equalLoadRuns.filter(
      (run) =>
        run.scenario === row.scenario &&
        run.variant === row.variant &&
        run.upstreamRequests !== undefined,
    );
    const pages = own.reduce((sum, run) => sum + run.result.requests, 0);
    if (pages > 0)
      row.upstreamPerPage = own.reduce((sum, run) => sum + run.upstreamRequests, 0) / pages;
  }
}

/**
 * The most the open-loop generator is asked for: node:http on one core sent 2,200 requests/s for
 * ~90 KB answers at ~55% of its CPU; far above that it, not the server, would set the latency.
 */
export const MAX_EQUAL_LOAD_RATE = 3000;

/**
 * The fixed rate of a scenario's equal-load runs: a share of the slowest valid contender's median,
 * so that every variant can keep up with it (at most MAX_EQUAL_LOAD_RATE). Undefined when no
 * variant has a valid median.
 * @param {SummaryRow[]} rows
 */
export function equalLoadRate(rows, scenario, share) {
  const valid = rows.filter(
    (row) => row.scenario === scenario && row.status === 'valid' && row.rps,
  );
  const contenders = valid.filter((row) => row.variant !== 'ceiling');
  const medians = (contenders.length ? contenders : valid).map((row) => row.rps.median);
  return medians.length
    ? Math.min(MAX_EQUAL_LOAD_RATE, Math.max(1, Math.round(Math.min(...medians) * share)))
    : undefined;
}

/** An equal-load run that answered less than this share of its rate fell behind it. */
const KEPT_UP = 0.95;

/**
 * Latency at equal load, one row per scenario: `p50 / p99` ms of each variant at the same rate,
 * medians over the rounds.
 * @param {EqualLoadRun[]} equalLoadRuns
 * @param {string[]} variants
 */
export function equalLoadTable(
  equalLoadRuns,
  variants,
  share,
  { markdown = false, shares = {} } = {},
) {
  const scenarios = [...new Set(equalLoadRuns.map((run) => run.scenario))];
  const headers = ['scenario', 'rate req/s', ...variants];
  const table = scenarios.map((scenario) => {
    const own = equalLoadRuns.filter((run) => run.scenario === scenario);
    return [
      markdown ? `\`${scenario}\`` : scenario,
      integer.format(own[0].rate),
      ...variants.map((variant) => {
        const mine = own.filter((candidate) => candidate.variant === variant);
        if (mine.length === 0) return '–';
        if (mine.some((run) => run.problems.length > 0)) return 'INVALID';
        const of = (pick) => median(mine.map((run) => pick(run.result)));
        const cell = `${fmt.ms(of((result) => result.latency.p50))} / ${fmt.ms(of((result) => result.latency.p99))}`;
        const answered = of((result) => result.rps);
        const notes = [
          ...(answered < mine[0].rate * KEPT_UP ? [`fell behind: ${fmt.rps(answered)}/s`] : []),
          ...(of((result) => result.loadCpu) >= CLIENT_BOUND ? ['client-bound'] : []),
        ];
        return notes.length ? `${cell} (${notes.join(', ')})` : cell;
      }),
    ];
  });
  const exceptions = Object.entries(shares)
    .filter(([scenario]) => scenarios.includes(scenario))
    .map(([scenario, own]) => `${scenario}: ${Math.round(own * 100)}%`);
  const title =
    `Latency at equal load: p50 / p99 ms of each variant at the same constant rate, ${Math.round(share * 100)}% of the slowest ` +
    `variant's median req/s in that scenario${exceptions.length ? ` (${exceptions.join(', ')})` : ''} (open-loop runs after the flat-out ones, medians of as many interleaved rounds).`;
  if (!markdown) return [title, alignText(headers, table)].join('\n');
  return [
    `**${title}** Flat out, as in the table above, latency is mostly queueing (connections ÷ throughput): a server that ` +
      'answers files sooner sends its connections sooner to the render queue, so its p99 there says little about speed. ' +
      'Here request k is sent at k ÷ rate whether or not earlier ones were answered, over at most as many connections, and its ' +
      'latency counts from then (no coordinated omission), so at the same offered load lower is faster. "fell behind": the ' +
      'variant answered under 95% of the rate; "client-bound": the load generator used ≥ 90% of its CPU. ' +
      `Rates are capped at ${integer.format(MAX_EQUAL_LOAD_RATE)}/s, what the generator (node:http, one core) sends without becoming the bottleneck.`,
    '',
    `| ${headers.map(escapeCell).join(' | ')} |`,
    `|---|--:|${variants.map(() => '--:').join('|')}|`,
    ...table.map((cells) => `| ${cells.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const fmt = {
  rps: (value) =>
    value === undefined ? '–' : value < 100 ? value.toFixed(1) : integer.format(value),
  ratio: (value) => (value === undefined ? '–' : `${value.toFixed(2)}×`),
  // autocannon records whole milliseconds: 0 means "under a millisecond".
  ms: (value) =>
    value === undefined
      ? '–'
      : value < 1
        ? '<1'
        : value < 10
          ? String(Math.round(value * 10) / 10)
          : integer.format(value),
  bytes: (value) =>
    value === undefined
      ? '–'
      : value < 1000
        ? `${Math.round(value)} B`
        : `${(value / 1000).toFixed(1)} kB`,
  us: (value) =>
    value === undefined ? '–' : value < 100 ? value.toFixed(1) : integer.format(value),
  rss: (value) => (value === undefined ? '–' : `${integer.format(value / 2 ** 20)} MiB`),
  perPage: (value) =>
    value === undefined ? '–' : value >= 1 || value === 0 ? value.toFixed(2) : value.toFixed(3),
  spread: (rps) =>
    !rps || rps.values.length < 2
      ? '–'
      : `±${Math.round(((rps.max - rps.min) / 2 / rps.median) * 100)}%`,
};

/** A load generator using this share of its CPU or more was the bottleneck, not the server. */
export const CLIENT_BOUND = 0.9;

/** Short mark for a row's validity and the revalidation behaviour, explained in the legend. */
function mark(row) {
  if (row.status === 'failed') return 'FAILED';
  if (row.status === 'invalid') return 'INVALID';
  if (row.status === 'unsupported') return 'cannot serve';
  const marks = [];
  if (row.revalidation === 'no-etag') marks.push('no ETag (200s)');
  if (row.revalidation === 'ignored') marks.push('ignores If-None-Match (200s)');
  if (row.loadCpu !== undefined && row.loadCpu >= CLIENT_BOUND) marks.push('client-bound');
  return marks.length ? marks.join(', ') : 'ok';
}

const COLUMNS = [
  ['#', (row) => (row.rank ? String(row.rank) : '')],
  ['variant', (row) => row.variant],
  ['req/s', (row) => (row.status === 'valid' ? fmt.rps(row.rps?.median) : '–')],
  ['spread', (row) => (row.status === 'valid' ? fmt.spread(row.rps) : '–')],
  ['×stock', (row) => fmt.ratio(row.vsStock)],
  ['×ceiling', (row) => fmt.ratio(row.vsCeiling)],
  ['p50 ms', (row) => fmt.ms(row.latencyP50)],
  ['p99 ms', (row) => fmt.ms(row.latencyP99)],
  ['errors', (row) => (row.rounds ? String(row.errors) : '–')],
  ['non-2xx/304', (row) => (row.rounds ? String(row.badStatuses) : '–')],
  ['B/resp', (row) => fmt.bytes(row.bytesPerResponse)],
  ['peak RSS', (row) => fmt.rss(row.peakRss)],
  [
    'CPU srv/load',
    (row) =>
      row.serverCpu === undefined
        ? '–'
        : `${Math.round(row.serverCpu * 100)}/${Math.round(row.loadCpu * 100)}%`,
  ],
  ['srv µs/resp', (row) => fmt.us(row.serverUsPerResponse)],
  ['hits', (row) => (row.hitRatio === undefined ? '–' : `${(row.hitRatio * 100).toFixed(1)}%`)],
  ['upstream/page', (row) => fmt.perPage(row.upstreamPerPage)],
  ['result', mark],
];
const LEFT = new Set(['variant', 'result', 'scenario']);

/** @param {string[][]} table @param {string[]} headers */
function alignText(headers, table) {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...table.map((cells) => cells[i].length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) => (LEFT.has(headers[i]) ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    line(headers),
    widths.map((width) => '─'.repeat(width)).join('  '),
    ...table.map(line),
  ].join('\n');
}

/**
 * @param {SummaryRow[]} rows
 * @param {{ title: (name: string) => string }} scenarios
 */
export function terminalTable(rows, scenarios) {
  const headers = COLUMNS.map(([header]) => header);
  const blocks = [];
  for (const scenario of [...new Set(rows.map((row) => row.scenario))]) {
    const group = rows.filter((row) => row.scenario === scenario);
    const table = group.map((row) => COLUMNS.map(([, cell]) => cell(row)));
    const problems = group
      .filter((row) => row.status !== 'valid')
      .map(
        (row) =>
          `  ${row.variant} ${row.status === 'unsupported' ? 'cannot serve this app' : row.status}: ${row.reasons.slice(0, 3).join('; ')}`,
      );
    blocks.push([scenarios.title(scenario), alignText(headers, table), ...problems].join('\n'));
  }
  return blocks.join('\n\n');
}

export const escapeCell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');

/**
 * @param {{ rows: SummaryRow[], scenarios: { title: (name: string) => string, describe: (name: string) => string },
 *   settings: Record<string, any>, machine: Record<string, any>, startedAt: string, resultsFile: string }} input
 */
export function markdown({
  rows,
  scenarios,
  settings,
  machine,
  startedAt,
  resultsFile,
  startups = [],
  equalLoadRuns = [],
  pairedSummary = [],
  states = [],
  equalLoadShares = {},
}) {
  const date = startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const pin = settings.pin.enabled
    ? `server pinned to CPU ${settings.pin.serverCpus} and load generator to CPU ${settings.pin.loadCpus} (taskset)`
    : `no CPU pinning (${settings.pin.reason})`;
  const lines = [
    `Measured ${date} by \`npm run bench\` (${resultsFile}).`,
    '',
    `- **Machine:** ${machine.cpuModel}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB RAM, ${machine.os}; ${machine.busyBeforeStart === undefined ? '' : `CPUs ${Math.round(machine.busyBeforeStart * 100)}% busy with other work just before the start; `}load average ${machine.loadAverage.join(' / ')} at start, ${machine.loadAverageEnd?.join(' / ') ?? '?'} at the end${machine.stealDuringRuns === undefined ? '' : `; the hypervisor took ${(machine.stealDuringRuns * 100).toFixed(1)}% of CPU time during the runs (steal)`}.`,
    `- **Software:** Node ${machine.node}${machine.bun ? `, Bun ${machine.bun}` : ''}; commit ${machine.commit ?? 'unknown'}.`,
    `- **Load:** autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.rounds} interleaved round(s) × ${settings.duration} s per variant and scenario after a ${settings.warmup} s warm-up (${settings.renderWarmup ?? settings.warmup} s in scenarios that render); ${pin}.`,
    `- **Critical CSS:** ${settings.criticalCss}.`,
    ...(settings.localized ? [`- **Locales:** ${settings.localized}.`] : []),
    ...(settings.skipped?.length
      ? [
          `- **Skipped:** ${settings.skipped.map(({ name, why }) => `\`${name}\` (${why})`).join('; ')}.`,
        ]
      : []),
    ...(startups.length
      ? [
          `- **Start to first answer** (process spawned → ready line → first request answered, polled every 50–100 ms): ${startups.map(([name, ms]) => `\`${name}\` ${ms} ms`).join(', ')}.`,
        ]
      : []),
    ...(settings.patches?.length
      ? [
          `- **Patched dependencies:** node_modules carries the project's patches (${settings.patches.map((name) => `\`${name}\``).join(', ')}); ` +
            'the CommonEngine variants render with the CommonEngine bundled in dist/server/main.server.mjs, patches included (bench/README.md says which variant runs which patched code).',
        ]
      : []),
    '',
    '| Scenario | # | Variant | req/s (median) | spread | × stock | × ceiling | p50 ms | p99 ms | errors | non-2xx/304 | bytes/resp | peak RSS | CPU server/load | server µs/resp | hits | upstream/page | result |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  // Only scenarios with setups of their own ran (their sections follow): the settings, without an empty variant table.
  if (rows.length === 0) return `${lines.slice(0, -3).join('\n')}\n`;
  let previous;
  for (const row of rows) {
    const cells = COLUMNS.map(([, cell]) => cell(row));
    const scenario = row.scenario === previous ? '' : `**${row.scenario}**`;
    previous = row.scenario;
    const [rank, variant, ...rest] = cells;
    lines.push(`| ${[scenario, rank, `\`${variant}\``, ...rest].map(escapeCell).join(' | ')} |`);
  }
  const failures = rows.filter((row) => row.status !== 'valid');
  lines.push(
    '',
    '**How to read it.** Each req/s is the median of the interleaved rounds (spread: half the min–max range, relative to the median). ' +
      "× stock and × ceiling divide medians of the same scenario; the ceiling of `ssr` is node:http + CommonEngine, the render's own cost. " +
      "p50/p99 are medians over rounds of each round's latency percentiles; bytes/resp includes headers; peak RSS is the highest VmHWM of the server process during a measured run (origin-cluster: summed over primary and workers). " +
      'CPU server/load: share of one CPU used by the server process (and its workers) and by the load generator during the runs (medians); "client-bound": the load generator used ≥ 90% of its CPU, so the server may be faster than shown. ' +
      "Server µs/resp: the server process's CPU time per response (median over rounds), the cost to compare where rows are client-bound. " +
      'hits: the share of answers a cache answered (`ssr-visitors`). ' +
      "upstream/page: the requests that reached the process's API (the app's own, served by the bench: one per process) per answer of the fixed-rate runs below, whose every request is answered before the count is read; a page made of data asks it twice per render (the data every page shares, and its item) unless a cache answers. " +
      '# ranks the valid variants (the ceiling is a reference, not a contender). ' +
      'INVALID: the answers were not what a browser needs (status, type, length, errors), so the row is not ranked. ' +
      "cannot serve: a peer (not the origin, not stock) answered one of the app's pages with another status than the app gives it (a redirect to the page's folder, a 200 where the app's server route says 404: CommonEngine alone does not read server routes), so it was not loaded: a limit of that server, not a failure of the run. " +
      '"ignores If-None-Match" / "no ETag": the variant sends the full page where a 304 was possible; that is its result, not an error. ' +
      'On a shared 2-core machine expect ±15% between runs: compare variants within one table, not across tables.',
    '',
    'Scenarios: ' +
      [...new Set(rows.map((row) => row.scenario))]
        .map((name) => `\`${name}\` ${scenarios.describe(name)}`)
        .join(' '),
  );
  if (equalLoadRuns.length > 0) {
    lines.push(
      '',
      equalLoadTable(equalLoadRuns, settings.variants, settings.equalLoad, {
        markdown: true,
        shares: equalLoadShares,
      }),
    );
  }
  if (pairedSummary.length > 0) lines.push('', pairedTable(pairedSummary, { markdown: true }));
  lines.push(...runtimeComparison(rows));
  for (const target of [
    renderCacheTarget(rows),
    visitorTarget(rows),
    compressionTarget(rows),
    dataTarget(rows, states, equalLoadRuns),
  ]) {
    if (target) lines.push('', target);
  }
  if (failures.length > 0) {
    lines.push('', 'Not ranked:', '');
    for (const row of failures)
      lines.push(
        `- \`${row.variant}\` in \`${row.scenario}\` (${row.status === 'unsupported' ? 'cannot serve this app' : row.status}): ${escapeCell(row.reasons.slice(0, 4).join('; '))}`,
      );
  }
  return lines.join('\n') + '\n';
}

/**
 * Pages from the render cache against prerendered ones, both served by the origin in the same run:
 * the render cache's target is ≥ 0.8× the origin's ssg req/s.
 * @param {SummaryRow[]} rows
 */
export function renderCacheTarget(rows) {
  const find = (scenario) =>
    rows.find(
      (row) =>
        row.scenario === scenario && row.variant === 'origin' && row.status === 'valid' && row.rps,
    );
  const ssg = find('ssg');
  const cached = find('ssr-cached');
  if (!ssg || !cached) return undefined;
  const ratio = cached.rps.median / ssg.rps.median;
  const micros = (row) => fmt.us(row.serverUsPerResponse);
  return (
    `**Render cache:** the origin answered \`ssr-cached\` at ${fmt.ratio(ratio)} its \`ssg\` req/s (target ≥ 0.80: ${ratio >= 0.8 ? 'met' : 'missed'}), ` +
    `${micros(cached)} µs against ${micros(ssg)} µs of server CPU per response. The peers have no render cache: they render every \`ssr-cached\` request.`
  );
}

/**
 * Every visitor against the anonymous: the origin's ssr-visitors (a new session and analytics
 * cookies on every request) against its ssr-cached in the same run; the target is ≥ 0.8×.
 * @param {SummaryRow[]} rows
 */
export function visitorTarget(rows) {
  const find = (scenario) =>
    rows.find(
      (row) =>
        row.scenario === scenario && row.variant === 'origin' && row.status === 'valid' && row.rps,
    );
  const cached = find('ssr-cached');
  const visitors = find('ssr-visitors');
  if (!cached || !visitors) return undefined;
  const throughput = visitors.rps.median / cached.rps.median;
  // A client-bound row's req/s is what the load generator could send: on this scenario it builds
  // a new session per request, which costs it more than a request it holds ready. The server's own
  // capacity is then its CPU per response, whose ratio the verdict reads instead.
  const clientBound = [cached, visitors].some(
    (row) => row.loadCpu !== undefined && row.loadCpu >= CLIENT_BOUND,
  );
  const capacity =
    cached.serverUsPerResponse && visitors.serverUsPerResponse
      ? cached.serverUsPerResponse / visitors.serverUsPerResponse
      : undefined;
  const byCapacity = clientBound && capacity !== undefined;
  const ratio = byCapacity ? capacity : throughput;
  const hits = visitors.hitRatio === undefined ? '–' : `${(visitors.hitRatio * 100).toFixed(1)}%`;
  return (
    `**Every visitor:** the origin answered \`ssr-visitors\` (a new session on every request) at ${fmt.ratio(throughput)} its anonymous \`ssr-cached\` req/s` +
    (byCapacity
      ? `, a figure of the load generator (client-bound); by server CPU per response (${fmt.us(visitors.serverUsPerResponse)} µs against ${fmt.us(cached.serverUsPerResponse)} µs) its capacity is ${fmt.ratio(capacity)} (target ≥ 0.80: ${ratio >= 0.8 ? 'met' : 'missed'}), `
      : ` (target ≥ 0.80: ${ratio >= 0.8 ? 'met' : 'missed'}), ${fmt.us(visitors.serverUsPerResponse)} µs against ${fmt.us(cached.serverUsPerResponse)} µs of server CPU per response, `) +
    `${hits} of its answers from the render cache.`
  );
}

/**
 * What answering in the coding a browser asks for costs the origin's throughput: each compressed
 * scenario against its plain one, same run (target ≥ 0.90).
 * @param {SummaryRow[]} rows
 */
export function compressionTarget(rows) {
  const find = (scenario) =>
    rows.find(
      (row) =>
        row.scenario === scenario && row.variant === 'origin' && row.status === 'valid' && row.rps,
    );
  const pairs = [
    ['ssg-br', 'ssg'],
    ['ssr-cached-br', 'ssr-cached'],
  ]
    .map(([coded, plain]) => ({ coded: find(coded), plain: find(plain) }))
    .filter(({ coded, plain }) => coded && plain);
  if (pairs.length === 0) return undefined;
  return `**Compression:** ${pairs
    .map(({ coded, plain }) => {
      const ratio = coded.rps.median / plain.rps.median;
      return (
        `the origin answered \`${coded.scenario}\` at ${fmt.ratio(ratio)} its \`${plain.scenario}\` req/s ` +
        `(target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'missed'}; ${fmt.us(coded.serverUsPerResponse)} against ` +
        `${fmt.us(plain.serverUsPerResponse)} µs of server CPU and ${fmt.bytes(coded.bytesPerResponse)} against ` +
        `${fmt.bytes(plain.bytesPerResponse)} per response)`
      );
    })
    .join('; ')}.`;
}

/**
 * The origin under Node and under Bun, side by side, when both ran: the numbers behind the
 * "Node or Bun" advice in docs/benchmark.md, generated like the rest.
 */
function runtimeComparison(rows) {
  const pairs = [...new Set(rows.map((row) => row.scenario))]
    .map((scenario) => {
      const find = (name) =>
        rows.find(
          (row) =>
            row.scenario === scenario && row.variant === name && row.status === 'valid' && row.rps,
        );
      return { scenario, node: find('origin'), bun: find('origin-bun') };
    })
    .filter(({ node, bun }) => node && bun);
  if (pairs.length === 0) return [];
  return [
    '',
    '**Node or Bun** (the same `dist/server/server.mjs`; `origin` runs on Node, `origin-bun` on Bun):',
    '',
    '| scenario | Node req/s | Bun req/s | Bun ÷ Node | Node p99 ms | Bun p99 ms | Node peak RSS | Bun peak RSS |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
    ...pairs.map(
      ({ scenario, node, bun }) =>
        `| \`${scenario}\` | ${fmt.rps(node.rps.median)} | ${fmt.rps(bun.rps.median)} | ${fmt.ratio(bun.rps.median / node.rps.median)} | ${fmt.ms(node.latencyP99)} | ${fmt.ms(bun.latencyP99)} | ${fmt.rss(node.peakRss)} | ${fmt.rss(bun.peakRss)} |`,
    ),
  ];
}

/** What pages made of data are held to (ssr-data), the origin against stock in the same run. */
export const DATA_TARGETS = { upstreamPerPage: 0.05, p50VsStock: 0.3, sharedRequests: 1 };

/**
 * Pages made of data, the origin against the stock server in the same run (`ssr-data`): what reached
 * the API per page after warm-up, p50 at the same fixed rate, and how often a burst of distinct
 * pages on a fresh process asked the API for what they share. Undefined when the origin did not run
 * it validly.
 * @param {SummaryRow[]} rows @param {VariantState[]} states @param {EqualLoadRun[]} equalLoadRuns
 */
export function dataTarget(rows, states, equalLoadRuns) {
  const scenario = 'ssr-data';
  const row = (variant) =>
    rows.find(
      (one) => one.scenario === scenario && one.variant === variant && one.status === 'valid',
    );
  const origin = row('origin');
  if (!origin) return undefined;
  const stock = row('stock');
  const verdict = (met) => (met ? 'met' : 'missed');
  const parts = [];
  const up = origin.upstreamPerPage;
  parts.push(
    up === undefined
      ? 'upstream requests per page not measured (they are counted in the fixed-rate runs: --equal-load 0?)'
      : `the origin's API was asked ${fmt.perPage(up)} times per page after warm-up (target ≤ ${DATA_TARGETS.upstreamPerPage}: ${verdict(up <= DATA_TARGETS.upstreamPerPage)})` +
          (stock?.upstreamPerPage === undefined
            ? ''
            : `, the stock server's ${fmt.perPage(stock.upstreamPerPage)}`),
  );
  const fixed = (variant) =>
    equalLoadRuns.filter(
      (run) => run.scenario === scenario && run.variant === variant && run.problems.length === 0,
    );
  const [ours, theirs] = [fixed('origin'), fixed('stock')];
  if (ours.length > 0 && theirs.length > 0) {
    const at = (runs, pick) => median(runs.map((run) => pick(run.result.latency)));
    const ratio = at(ours, (l) => l.p50) / at(theirs, (l) => l.p50);
    parts.push(
      `at ${integer.format(ours[0].rate)} req/s its p50 was ${fmt.ms(at(ours, (l) => l.p50))} ms against stock's ${fmt.ms(at(theirs, (l) => l.p50))} ms, ` +
        `${fmt.ratio(ratio)} (target ≤ ${DATA_TARGETS.p50VsStock.toFixed(2)}: ${verdict(ratio <= DATA_TARGETS.p50VsStock)}; p99 ${fmt.ms(at(ours, (l) => l.p99))} against ${fmt.ms(at(theirs, (l) => l.p99))} ms)`,
    );
  } else {
    parts.push(
      `p50 at a fixed rate not measured (${stock ? 'no valid fixed-rate runs: --equal-load 0?' : 'stock did not run it'})`,
    );
  }
  const burstOf = (variant) => states.find((state) => state.name === variant)?.bursts?.[scenario];
  const [ourBurst, theirBurst] = [burstOf('origin'), burstOf('stock')];
  if (ourBurst) {
    // What the pages share is what a server without a data cache asked for more than once.
    const shared = [theirBurst, ourBurst].find((one) => one && one.mostAsked.requests > 1)
      ?.mostAsked.path;
    const most = ourBurst.mostAsked.requests;
    parts.push(
      `a burst of ${ourBurst.pages} distinct pages at once on a fresh process asked its API for ` +
        (shared
          ? `what they share (\`${shared}\`) ${ourBurst.byPath[shared] ?? 0}×`
          : 'each path') +
        `, and for no path more than ${most}× (target ${DATA_TARGETS.sharedRequests}: ${verdict(most <= DATA_TARGETS.sharedRequests)})` +
        (theirBurst && shared
          ? `; the stock server asked for it ${theirBurst.byPath[shared] ?? 0}×`
          : ''),
    );
  }
  return `**Data (\`${scenario}\`):** ${parts.join('; ')}.`;
}
