// The browser bench's medians and tables (bench/browser.mjs): per page and variant, what a cold
// load on the mobile network cost, and each figure as a ratio of the stock server's in the same run;
// and for a signed-in visitor's page, when their personal part was painted against the page's LCP.
import { median } from '../../scripts/lib/median.mjs';

const FIGURES = ['bytes', 'fcp', 'lcp', 'hydrated', 'part'];

/**
 * @param {{ variants: { name: string, label: string }[], pages: string[], loads: object[],
 *   personal?: { filled: string, inBrowser: string, variants: Set<string> } }} run
 */
export function browserSummary({ variants, pages, loads, personal }) {
  const summary = pages.map((page) => {
    const signedIn = page === personal?.filled || page === personal?.inBrowser;
    const rows = variants
      .filter(({ name }) => !signedIn || personal.variants.has(name))
      .map(({ name, label }) => {
        const mine = loads.filter((load) => load.page === page && load.variant === name);
        const row = { variant: name, label, loads: mine.length };
        for (const figure of FIGURES) {
          row[figure] = median(
            mine.map((load) => load[figure]).filter((value) => value !== undefined),
          );
        }
        row.earlyHints = median(mine.map((load) => load.earlyHints));
        row.protocol = mine[0]?.protocol;
        return row;
      });
    const stock = rows.find((row) => row.variant === 'stock');
    for (const row of rows) {
      row.vsStock = Object.fromEntries(
        FIGURES.map((figure) => [figure, stock ? row[figure] / stock[figure] : undefined]),
      );
    }
    return { page, rows };
  });
  return { pages: summary, personal: personal && personalSummary(variants, loads, personal) };
}

/**
 * Per variant that fills the part: when it was painted and the page's LCP (medians of the loads
 * where the origin filled it), the median of each load's part − LCP (the target: ≤ 0, the part
 * painted by the page's largest paint), and the part when made in the browser, for comparison.
 */
function personalSummary(variants, loads, { filled, inBrowser, variants: filling }) {
  return variants
    .filter(({ name }) => filling.has(name))
    .map(({ name, label }) => {
      const of = (page) =>
        loads.filter(
          (load) => load.page === page && load.variant === name && load.part !== undefined,
        );
      // A load whose part ran out of time at the origin got the placeholder, and the part made by
      // the app: counted, not measured as a filled part.
      const mine = of(filled).filter((load) => load.partInHtml);
      const overLcp = median(mine.map((load) => load.part - load.lcp));
      return {
        variant: name,
        label,
        placeholders: of(filled).length - mine.length,
        part: median(mine.map((load) => load.part)),
        lcp: median(mine.map((load) => load.lcp)),
        overLcp,
        withinLcp: overLcp === undefined ? undefined : overLcp <= 0,
        inBrowser: median(of(inBrowser).map((load) => load.part)),
      };
    });
}

const ms = (value) => (value === undefined ? '–' : `${Math.round(value).toLocaleString('en-US')}`);
const kB = (value) =>
  value === undefined ? '–' : `${Math.round(value / 1000).toLocaleString('en-US')}`;
const ratio = (value) =>
  value === undefined || Number.isNaN(value) ? '–' : `${value.toFixed(2)}×`;
const signed = (value) => (value === undefined ? '–' : `${value > 0 ? '+' : ''}${ms(value)}`);
const verdict = (row) =>
  row.withinLcp === undefined
    ? 'not measured'
    : row.withinLcp
      ? 'painted by the LCP (target ≤ LCP: met)'
      : 'painted after the LCP (target ≤ LCP: missed)';

/** @param {ReturnType<typeof browserSummary>} summary */
export function browserTerminal(summary) {
  const lines = [];
  for (const { page, rows } of summary.pages) {
    lines.push(page);
    for (const row of rows) {
      lines.push(
        `  ${row.variant.padEnd(13)} ${kB(row.bytes).padStart(5)} kB  FCP ${ms(row.fcp).padStart(6)}  ` +
          `LCP ${ms(row.lcp).padStart(6)} (${ratio(row.vsStock.lcp)})  hydrated ${ms(row.hydrated).padStart(6)} ` +
          `(${ratio(row.vsStock.hydrated)})  ${row.protocol ?? ''}${row.earlyHints ? `, ${row.earlyHints} from a 103` : ''}` +
          (row.part === undefined ? '' : `  part ${ms(row.part).padStart(6)}`),
      );
    }
  }
  if (summary.personal?.length) {
    lines.push('', 'The personal part, signed in (medians, ms from the navigation):');
    for (const row of summary.personal) {
      lines.push(
        `  ${row.variant.padEnd(13)} part ${ms(row.part).padStart(6)}  LCP ${ms(row.lcp).padStart(6)}  ` +
          `part − LCP ${signed(row.overLcp).padStart(6)}: ${verdict(row)}; made in the browser: ${ms(row.inBrowser)}` +
          (row.placeholders
            ? `; ${row.placeholders} load(s) got the placeholder (the part out of time), left out`
            : ''),
      );
    }
  }
  return lines.join('\n');
}

/**
 * The Markdown table and what it was measured on.
 * @param {ReturnType<typeof browserSummary>} summary
 * @param {{ when: Date, machine: object, rounds: number, network: object, file: string }} context
 */
export function browserMarkdown(summary, { when, machine, rounds, network, file }) {
  const lines = [
    `Measured ${when.toISOString().replace('T', ' ').slice(0, 19)} UTC by \`npm run bench:browser\` (${file}).`,
    '',
    `- **Machine:** ${machine.cpuModel}, ${machine.cpus} CPUs; Node ${machine.node}; commit ${machine.commit ?? '?'}.`,
    `- **Browser:** Chromium (headless), a fresh context per load (nothing cached, no connection open); ` +
      `network emulated through CDP: ${network.latency} ms latency, ${(network.downloadThroughput * 8) / 1e6} Mbit/s down, ${(network.uploadThroughput * 8) / 1e6} Mbit/s up.`,
    `- **Rounds:** ${rounds}, interleaved (every variant loads each page once per round, in a Williams order); medians. ` +
      'The rendered page is in the render cache before the first load (the stock server renders every load).',
    "- **bytes:** everything received for the load (headers included) until hydration (a file a 103 fetched, which Chromium reports as 0 bytes, counted as the server sends it again); **FCP**, **LCP**: first and largest contentful paint; **hydrated**: the last `ngh` attribute removed; all in ms from the navigation's start. **× stock**: the same figure of the stock server in this run.",
    ...(summary.personal?.length
      ? [
          "- **signed in:** a new visitor per load with the page's personal part; **part**: when the part was first painted showing the visitor their text (Element Timing), with the visitor's cookie on the page's request (the origin fills the part) or set by a script once the page came (**part in the browser**: the shared page, the part made after hydration). Measured on the servers that fill the part.",
        ]
      : []),
    '',
    '| page | variant | kB | FCP ms | LCP ms | hydrated ms | part ms | kB × stock | LCP × stock | hydrated × stock | protocol | files from a 103 |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|',
  ];
  for (const { page, rows } of summary.pages) {
    rows.forEach((row, i) => {
      lines.push(
        `| ${i === 0 ? `\`${page}\`` : ''} | ${row.label} | ${kB(row.bytes)} | ${ms(row.fcp)} | ${ms(row.lcp)} | ${ms(row.hydrated)} | ${ms(row.part)} | ` +
          `${ratio(row.vsStock.bytes)} | ${ratio(row.vsStock.lcp)} | ${ratio(row.vsStock.hydrated)} | ${row.protocol ?? '–'} | ${row.earlyHints ?? 0} |`,
      );
    });
  }
  if (summary.personal?.length) {
    lines.push(
      '',
      '| signed in | part ms | LCP ms | part − LCP ms (median per load) | target: part ≤ LCP | part made in the browser ms | loads sent the placeholder (part out of time, left out) |',
      '|---|--:|--:|--:|---|--:|--:|',
    );
    for (const row of summary.personal) {
      lines.push(
        `| ${row.label} | ${ms(row.part)} | ${ms(row.lcp)} | ${signed(row.overLcp)} | ${row.withinLcp === undefined ? '–' : row.withinLcp ? 'met' : 'missed'} | ${ms(row.inBrowser)} | ${row.placeholders} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
