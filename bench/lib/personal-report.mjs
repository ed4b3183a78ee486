// ssr-personal's figures, from its raw runs: medians per setup, how each run's parts were answered,
// the ratios the issue holds personal parts to, and the same summary as a terminal table and as
// Markdown.
import { median, medianAndRange } from '../../scripts/lib/median.mjs';
import { CLIENT_BOUND, fmt } from './report.mjs';
import { result, setupMarkdownTables, setupTerminal } from './setup-table.mjs';

/**
 * The targets of issue 56, in one run on the same build: returning visitors ≥ 0.5× the anonymous
 * cached page, by req/s and by server CPU per response; every request a new visitor ≥ 5× the
 * private route; failing that (Angular's bootstrap per part), what a new visitor adds within 1.5× of
 * the floor, a bare renderApplication (bench/part-floor.mjs).
 */
export const RETURNING_VS_ANONYMOUS = 0.5;
export const NEW_VS_PRIVATE = 5;
export const NEW_VS_FLOOR = 1.5;

/** Per response, at or under this: none (parts kept, no placeholder); at or over RENDERED: each. */
const NONE_PER_RESPONSE = 0.01;
const RENDERED_PER_RESPONSE = 0.9;

/**
 * @typedef {ReturnType<ReturnType<typeof import('./personal-parts.mjs').createPersonalBench>['results']>} PersonalResults
 */

/** Why a run was not answered as its setup says (its parts' counts), or undefined when it was. */
function notAsNamed(expect, run) {
  const requests = run.result.requests;
  if (expect === undefined || requests === 0 || run.partRenders === undefined) return undefined;
  const renders = run.partRenders / requests;
  const placeholders = run.placeholders / requests;
  if (expect === 'none' && run.partRenders + run.partHits > 0)
    return `${run.partRenders + run.partHits} parts in answers without the cookie`;
  if (expect === 'kept' && renders > NONE_PER_RESPONSE)
    return `${renders.toFixed(2)} part renders per response: parts not kept for their visitors`;
  if (expect === 'rendered' && renders < RENDERED_PER_RESPONSE)
    return `only ${renders.toFixed(2)} part renders per response`;
  if (expect !== 'none' && placeholders > NONE_PER_RESPONSE)
    return `${placeholders.toFixed(3)} placeholders per response in place of the visitor's part`;
  return undefined;
}

/** @param {{ personal: PersonalResults, rounds: number }} input */
export function summarizePersonal({ personal, rounds }) {
  const setups = personal.setups.map((setup) => {
    const own = personal.runs.filter((run) => run.setup === setup.name);
    const row = {
      setup: setup.name,
      label: setup.label,
      server: setup.server,
      status: 'valid',
      reasons: [],
      notes: [...(setup.check?.notes ?? [])],
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
    const mismatches = own.map((run) => notAsNamed(setup.expect, run)).filter(Boolean);
    if (mismatches.length) row.mismatch = mismatches[0];
    if (own.length > 0) {
      row.rps = medianAndRange(own.map((run) => run.result.rps));
      row.latencyP50 = median(own.map((run) => run.result.latency.p50));
      row.latencyP99 = median(own.map((run) => run.result.latency.p99));
      const per = (pick) =>
        setup.server === 'origin'
          ? median(
              own.map((run) => (run.result.requests > 0 ? pick(run) / run.result.requests : 0)),
            )
          : undefined;
      row.partRendersPerResponse = per((run) => run.partRenders);
      row.keptPartsPerResponse = per((run) => run.partHits);
      row.placeholdersPerResponse = per((run) => run.placeholders);
      row.serverCpu = median(own.map((run) => run.serverCpu).filter((v) => v !== undefined));
      row.loadCpu = median(own.map((run) => run.result.loadCpu));
      const costs = own
        .filter((run) => run.serverCpu !== undefined && run.result.rps > 0)
        .map((run) => (run.serverCpu / run.result.rps) * 1e6);
      row.serverUsPerResponse = costs.length ? median(costs) : undefined;
      const peaks = own.map((run) => run.peakRss).filter((value) => value !== undefined);
      row.peakRss = peaks.length ? Math.max(...peaks) : undefined;
    }
    return row;
  });

  const find = (name) =>
    setups.find((row) => row.setup === name && row.status === 'valid' && row.rps);
  const [anonymous, returning, fresh, privateRoute, stock] = [
    'anonymous',
    'returning',
    'new',
    'private',
    'stock',
  ].map(find);
  const missing = (...pairs) => pairs.find(([row]) => !row)?.[1];
  const clientBound = (...rows) =>
    rows.some((row) => row.loadCpu !== undefined && row.loadCpu >= CLIENT_BOUND);
  const byCpu = (top, bottom) =>
    top.serverUsPerResponse && bottom.serverUsPerResponse
      ? bottom.serverUsPerResponse / top.serverUsPerResponse
      : undefined;

  const newVsPrivate = target({
    name: 'new visitors ÷ the private route, req/s',
    at: `≥ ${NEW_VS_PRIVATE.toFixed(2)}`,
    rows: [fresh, privateRoute],
    missing: missing([fresh, 'no valid new row'], [privateRoute, 'no valid private row']),
    value: () => fresh.rps.median / privateRoute.rps.median,
    met: (value) => value >= NEW_VS_PRIVATE,
    detail: () =>
      `by server CPU per response ${fmt.ratio(byCpu(fresh, privateRoute))}` +
      (clientBound(fresh, privateRoute) ? '; client-bound: req/s are the load generator’s' : ''),
  });
  const bare = personal.floor?.result?.bare?.cpuUs;
  const targets = [
    target({
      name: 'returning visitors ÷ the anonymous page, req/s',
      at: `≥ ${RETURNING_VS_ANONYMOUS.toFixed(2)}`,
      rows: [returning, anonymous],
      missing: missing(
        [returning, 'no valid returning row'],
        [anonymous, 'no valid anonymous row'],
      ),
      value: () => returning.rps.median / anonymous.rps.median,
      met: (value) => value >= RETURNING_VS_ANONYMOUS,
      detail: () =>
        clientBound(returning, anonymous) ? 'client-bound: req/s are the load generator’s' : '',
    }),
    target({
      name: 'returning visitors ÷ the anonymous page, by server CPU per response',
      at: `≥ ${RETURNING_VS_ANONYMOUS.toFixed(2)}`,
      rows: [returning, anonymous],
      missing: missing(
        [returning, 'no valid returning row'],
        [anonymous, 'no valid anonymous row'],
      ),
      value: () => byCpu(returning, anonymous),
      met: (value) => value >= RETURNING_VS_ANONYMOUS,
      detail: () =>
        `${fmt.us(returning.serverUsPerResponse)} against ${fmt.us(anonymous.serverUsPerResponse)} µs`,
    }),
    newVsPrivate,
    // The issue's fallback: held when new ÷ private misses, shown whenever the floor was measured.
    target({
      name: 'what a new visitor adds ÷ the floor (a bare renderApplication), server CPU',
      at: `≤ ${NEW_VS_FLOOR.toFixed(2)}${newVsPrivate.met === false ? '' : ' (if the 5× is missed)'}`,
      rows: [fresh, anonymous],
      missing:
        missing([fresh, 'no valid new row'], [anonymous, 'no valid anonymous row']) ??
        (bare === undefined
          ? `floor not measured: ${personal.floor?.error ?? 'not run'}`
          : undefined),
      value: () => (fresh.serverUsPerResponse - anonymous.serverUsPerResponse) / bare,
      met: (value) => value <= NEW_VS_FLOOR,
      detail: () =>
        `(${fmt.us(fresh.serverUsPerResponse)} − ${fmt.us(anonymous.serverUsPerResponse)}) µs per response ÷ ${fmt.us(bare)} µs per bare render`,
    }),
  ];

  const info = [];
  if (privateRoute && anonymous)
    info.push(
      `the private route ÷ the anonymous page: ${fmt.ratio(privateRoute.rps.median / anonymous.rps.median)} req/s, ` +
        `${fmt.us(privateRoute.serverUsPerResponse)} against ${fmt.us(anonymous.serverUsPerResponse)} µs of server CPU per response`,
    );
  if (fresh && stock)
    info.push(
      `new visitors ÷ the stock server: ${fmt.ratio(fresh.rps.median / stock.rps.median)} req/s, ` +
        `${fmt.us(fresh.serverUsPerResponse)} against ${fmt.us(stock.serverUsPerResponse)} µs of server CPU per response`,
    );
  if (personal.floor?.result) {
    const { result } = personal.floor;
    info.push(
      `the floor (bench/part-floor.mjs, ${personal.floor.seconds} s on the server CPUs, CPU per render, one at a time): ` +
        `bare renderApplication ${fmt.us(result.bare.cpuUs)} µs, renderPart of no part ${fmt.us(result['empty part'].cpuUs)} µs, ` +
        `of the part ${fmt.us(result.part.cpuUs)} µs (${fmt.ratio(result.part.cpuUs / result.bare.cpuUs)} the bare one), ` +
        `the whole page ${fmt.us(result.page.cpuUs)} µs`,
    );
  }
  return {
    visitors: personal.visitors,
    pagesPerVisitor: personal.pagesPerVisitor,
    setups,
    targets,
    info,
  };
}

/** A ratio held to a target, "not met" also when a row it reads is not what it names. */
function target({ name, at, rows, missing, value, met, detail }) {
  if (missing) return { name, target: at, text: '–', met: undefined, why: missing };
  const measured = value();
  if (measured === undefined || !Number.isFinite(measured))
    return { name, target: at, text: '–', met: undefined, why: 'server CPU not read' };
  const wrong = rows.find((row) => row.mismatch);
  const more = detail();
  return {
    name,
    target: at,
    value: measured,
    text: `${measured.toFixed(2)}×${more ? ` (${more})` : ''}`,
    met: wrong ? false : met(measured),
    why: wrong ? `the ${wrong.setup} row: ${wrong.mismatch}` : undefined,
  };
}

const HEADERS = [
  'setup',
  'server',
  'req/s',
  'spread',
  'p50 ms',
  'p99 ms',
  'errors',
  'non-2xx/304',
  'part renders/resp',
  'kept parts/resp',
  'placeholders/resp',
  'peak RSS',
  'CPU srv/load',
  'srv µs/resp',
  'result',
];

const perResponse = (value) => (value === undefined ? '–' : value.toFixed(value < 0.1 ? 3 : 2));

function cells(row) {
  const valid = row.status === 'valid';
  return [
    row.setup,
    row.server,
    valid ? fmt.rps(row.rps?.median) : '–',
    valid ? fmt.spread(row.rps) : '–',
    fmt.ms(row.latencyP50),
    fmt.ms(row.latencyP99),
    row.rounds ? String(row.errors) : '–',
    row.rounds ? String(row.badStatuses) : '–',
    perResponse(row.partRendersPerResponse),
    perResponse(row.keptPartsPerResponse),
    perResponse(row.placeholdersPerResponse),
    fmt.rss(row.peakRss),
    row.serverCpu === undefined
      ? '–'
      : `${Math.round(row.serverCpu * 100)}/${Math.round(row.loadCpu * 100)}%`,
    fmt.us(row.serverUsPerResponse),
    result(row),
  ];
}

/** The scenario's lines for the terminal. */
export function personalTerminal(summary, title) {
  return setupTerminal(summary, { title, headers: HEADERS, cells, textColumns: 2 });
}

/** The scenario's section of the Markdown report. */
export function personalMarkdown(summary, { title, describe }) {
  return [
    '',
    `**${title}**`,
    '',
    ...setupMarkdownTables(summary, { headers: HEADERS, cells, textColumns: 2 }),
    '',
    `${describe} ` +
      `${summary.visitors} visitors × ${summary.pagesPerVisitor} pages per visitor. ` +
      'req/s, p50 and p99: medians of the rounds, flat out (p99 is mostly queueing there: connections ÷ throughput); server CPU per response: the process answering, not the API (served by the bench, on the load side). ' +
      "part renders, kept parts and placeholders per response: from the origin's /healthz before and after each run (parts begun, answered from the part cache, and given their placeholder instead: too late, failed or shed); renders still in flight when the load stops count too. " +
      '"NOT AS NAMED": the run was not answered as its setup says (returning visitors whose parts were rendered, new visitors given placeholders), so a target that reads it is not met. ' +
      'What a new visitor adds: its server CPU per response less the anonymous page’s, against the CPU of a bare renderApplication of an empty component measured after the rounds on the same CPUs (bench/part-floor.mjs).' +
      (summary.info.length ? ` ${summary.info.join('; ')}.` : ''),
  ];
}
