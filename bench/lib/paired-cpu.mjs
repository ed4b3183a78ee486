// Server CPU per answer, measured in pairs: a server and its reference loaded at the same time, on
// the same CPU, at the same constant rate, so that both see the same machine. Run back to back,
// the same server swung from 3,897 to 5,993 µs per render within minutes on this 2-core VM
// (2026-11-24, steal 0.0%), far more than the 5% these targets are about; loaded together, the
// origin's ratio to the ceiling stayed within 0.99–1.07 in every round of two ad-hoc runs.
import { median } from '../../scripts/lib/median.mjs';
import { judgeRun } from './validate.mjs';

/**
 * The pairs and the targets the issues set for them: CPU per answer of `variant` in `scenario` at
 * most `target`× that of `reference`. In `ssr` every request renders a different page (CPU per
 * render); the tracing pairs weigh what tracing adds to the cheapest answers, a prerendered page
 * and a render cache hit. The ablation has no target: it shows what the render cache's miss path
 * costs.
 * @typedef {{ variant: string, reference: string, scenario: string, target?: number }} Pair
 * @type {Pair[]}
 */
export const PAIRS = [
  { variant: 'origin', reference: 'ceiling', scenario: 'ssr', target: 1.05 },
  { variant: 'origin-app', reference: 'stock', scenario: 'ssr', target: 1 },
  { variant: 'origin', reference: 'origin-nocache', scenario: 'ssr' },
  ...['ssg', 'ssr-cached'].flatMap((scenario) => [
    { variant: 'origin-traced-10', reference: 'origin', scenario, target: 1.1 },
    { variant: 'origin-traced-0', reference: 'origin', scenario, target: 1.02 },
  ]),
];

/**
 * @typedef {{ round: number, variant: string, reference: string, scenario: string, rate: number,
 *   answered: [number, number], cpuSeconds: [number | undefined, number | undefined],
 *   problems: string[] }} PairedRun
 */

/** The pairs whose two variants both run (and whose scenario does). */
export function pairsIn(variantNames, scenarioNames) {
  return PAIRS.filter(
    (pair) =>
      scenarioNames.includes(pair.scenario) &&
      variantNames.includes(pair.variant) &&
      variantNames.includes(pair.reference),
  );
}

/**
 * The open-loop generator (node:http, bench/lib/open-loop.mjs) sends about 3,000 requests a second
 * from one core without becoming the bottleneck (MAX_EQUAL_LOAD_RATE), and a pair's two share the
 * load generator's core: at 7,000 a second each, a pair's rounds on `ssg` read 1.15–1.26× where
 * flat-out rounds of the same servers read 1.10×, and on `ssr-cached` 0.78–2.58× from round to
 * round (2026-11-28), the generator's queue measured rather than the servers.
 */
export const MAX_PAIRED_RATE = 1500;

/**
 * The rate each of the two is loaded at (at most MAX_PAIRED_RATE): `share` × the slower one's flat-out median, so that
 * together they keep the CPU busy 2 × share of the time and neither queues behind the other for
 * long. Undefined when either has no valid flat-out median.
 * @param {import('./report.mjs').SummaryRow[]} rows
 */
export function pairedRate(rows, pair, share) {
  const rps = [pair.variant, pair.reference].map(
    (name) =>
      rows.find(
        (row) => row.scenario === pair.scenario && row.variant === name && row.status === 'valid',
      )?.rps?.median,
  );
  if (rps.some((value) => !value)) return undefined;
  return Math.max(1, Math.min(MAX_PAIRED_RATE, Math.round(Math.min(...rps) * share)));
}

/**
 * One round of a pair: both loaded together, each one's CPU read before and after. The open-loop
 * load waits for every answer it is owed, so the CPU read afterwards is that of the renders
 * answered, with none left in flight at either end of the window. Each side's answers are judged
 * as every other run's are (judgeRun).
 * @param {{ jobs: [object, object], checks: [import('./validate.mjs').ScenarioCheck, import('./validate.mjs').ScenarioCheck],
 *   pids: [number, number], rate: number, duration: number,
 *   run: (job: object) => Promise<import('./load.mjs').LoadResult>,
 *   readCpuSeconds: (pid: number) => number | undefined,
 *   readRenders?: (side: number) => Promise<number | undefined> }} input
 *   (readRenders: the renders side 0 or 1 has begun, when the scenario is one of cache hits)
 * @returns {Promise<Pick<PairedRun, 'answered' | 'cpuSeconds' | 'problems'>>}
 */
export async function runPairedRound({
  jobs,
  checks,
  pids,
  rate,
  duration,
  run,
  readCpuSeconds,
  readRenders,
}) {
  const rendersBefore = await Promise.all([0, 1].map((i) => readRenders?.(i)));
  const before = pids.map(readCpuSeconds);
  const results = await Promise.all(jobs.map((job) => run({ ...job, duration, rate })));
  const after = pids.map(readCpuSeconds);
  const rendersAfter = await Promise.all([0, 1].map((i) => readRenders?.(i)));
  const problems = results.flatMap((result, i) =>
    judgeRun(result, checks[i]).map(
      (problem) => `${i === 0 ? 'variant' : 'reference'}: ${problem}`,
    ),
  );
  // A round of cache hits in which a server rendered measured its renders (an entry gone stale
  // mid-round refreshed on one side only), not its hits: the same pair read 0.33× to 3.9× from
  // round to round on ssr-cached (2026-12-07).
  for (const i of [0, 1]) {
    const rendered = (rendersAfter[i] ?? 0) - (rendersBefore[i] ?? 0);
    if (rendered > 0) {
      problems.push(
        `${i === 0 ? 'variant' : 'reference'}: rendered ${rendered} page(s) during a round of cache hits (entries gone stale, refreshed)`,
      );
    }
  }
  const cpuSeconds = /** @type {[number | undefined, number | undefined]} */ (
    pids.map((_, i) =>
      before[i] === undefined || after[i] === undefined ? undefined : after[i] - before[i],
    )
  );
  return {
    answered: [results[0].requests, results[1].requests],
    cpuSeconds,
    problems,
  };
}

/** µs of server CPU per answer, or undefined. */
export function perAnswer(cpuSeconds, answered) {
  return cpuSeconds === undefined || answered === 0 ? undefined : (cpuSeconds * 1e6) / answered;
}

/**
 * Each pair's summary: per round, the variant's CPU per render over the reference's; the median of
 * those ratios against the target. Rounds with problems are left out and counted.
 * @param {PairedRun[]} runs
 */
export function summarizePairs(runs) {
  return PAIRS.map((pair) => {
    const own = runs.filter(
      (run) =>
        run.variant === pair.variant &&
        run.reference === pair.reference &&
        run.scenario === pair.scenario,
    );
    if (own.length === 0) return undefined;
    const valid = own.filter((run) => run.problems.length === 0);
    const rounds = valid
      .map((run) => {
        const mine = perAnswer(run.cpuSeconds[0], run.answered[0]);
        const theirs = perAnswer(run.cpuSeconds[1], run.answered[1]);
        return mine && theirs
          ? { round: run.round, mine, theirs, ratio: mine / theirs }
          : undefined;
      })
      .filter((round) => round !== undefined);
    const ratio = median(rounds.map((round) => round.ratio));
    return {
      ...pair,
      rate: own[0].rate,
      rounds,
      invalidRounds: own.length - valid.length,
      ratio,
      mine: median(rounds.map((round) => round.mine)),
      theirs: median(rounds.map((round) => round.theirs)),
      met: ratio === undefined || pair.target === undefined ? undefined : ratio <= pair.target,
    };
  }).filter((summary) => summary !== undefined);
}

const fixed = (value, digits) => (value === undefined ? '?' : value.toFixed(digits));
const micro = (value) => (value === undefined ? '?' : Math.round(value).toLocaleString('en-US'));

/** The pairs as a table, Markdown or plain text. */
export function pairedTable(summaries, { markdown = false } = {}) {
  const code = (name) => (markdown ? `\`${name}\`` : name);
  const title =
    "Server CPU per answer, in pairs (each pair loaded together on the same CPU at one constant rate; ratio = median over rounds of the two servers' CPU per answer in that round; in ssr every answer is a render)";
  const headers = [
    'pair',
    'scenario',
    'rate req/s each',
    'µs/answer',
    'µs/answer (reference)',
    'ratio (median)',
    'rounds',
    'target',
  ];
  const rows = summaries.map((summary) => [
    `${code(summary.variant)} ÷ ${code(summary.reference)}`,
    summary.scenario,
    String(summary.rate),
    micro(summary.mine),
    micro(summary.theirs),
    fixed(summary.ratio, 3),
    summary.rounds.map((round) => fixed(round.ratio, 2)).join(' ') +
      (summary.invalidRounds ? ` (+${summary.invalidRounds} invalid)` : ''),
    summary.target === undefined
      ? '–'
      : `≤ ${summary.target}: ${summary.met === undefined ? 'no valid round' : summary.met ? 'met' : 'missed'}`,
  ]);
  if (markdown) {
    return [
      `**${title}.**`,
      '',
      `| ${headers.join(' | ')} |`,
      `|---|---|--:|--:|--:|--:|---|---|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n');
  }
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => row[i].length)),
  );
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
  return [`${title}:`, line(headers), ...rows.map(line)].join('\n');
}
