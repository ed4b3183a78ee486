// The browser bench's medians and tables (bench/browser.mjs): per page and variant, what a cold
// load on the mobile network cost, and each figure as a ratio of the stock server's in the same run.
import { median } from '../../scripts/lib/median.mjs';

const FIGURES = ['bytes', 'fcp', 'lcp', 'hydrated'];

/**
 * @param {{ variants: { name: string, label: string }[], pages: string[], loads: object[] }} run
 */
export function browserSummary({ variants, pages, loads }) {
  return pages.map((page) => {
    const rows = variants.map(({ name, label }) => {
      const mine = loads.filter((load) => load.page === page && load.variant === name);
      const row = { variant: name, label, loads: mine.length };
      for (const figure of FIGURES) row[figure] = median(mine.map((load) => load[figure]));
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
}

const ms = (value) => (value === undefined ? '–' : `${Math.round(value).toLocaleString('en-US')}`);
const kB = (value) =>
  value === undefined ? '–' : `${Math.round(value / 1000).toLocaleString('en-US')}`;
const ratio = (value) =>
  value === undefined || Number.isNaN(value) ? '–' : `${value.toFixed(2)}×`;

export function browserTerminal(summary) {
  const lines = [];
  for (const { page, rows } of summary) {
    lines.push(page);
    for (const row of rows) {
      lines.push(
        `  ${row.variant.padEnd(13)} ${kB(row.bytes).padStart(5)} kB  FCP ${ms(row.fcp).padStart(6)}  ` +
          `LCP ${ms(row.lcp).padStart(6)} (${ratio(row.vsStock.lcp)})  hydrated ${ms(row.hydrated).padStart(6)} ` +
          `(${ratio(row.vsStock.hydrated)})  ${row.protocol ?? ''}${row.earlyHints ? `, ${row.earlyHints} from a 103` : ''}`,
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
    "- **bytes:** everything received for the load (headers included) until hydration; **FCP**, **LCP**: first and largest contentful paint; **hydrated**: the last `ngh` attribute removed; all in ms from the navigation's start. **× stock**: the same figure of the stock server in this run.",
    '',
    '| page | variant | kB | FCP ms | LCP ms | hydrated ms | kB × stock | LCP × stock | hydrated × stock | protocol | files from a 103 |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|',
  ];
  for (const { page, rows } of summary) {
    rows.forEach((row, i) => {
      lines.push(
        `| ${i === 0 ? `\`${page}\`` : ''} | ${row.label} | ${kB(row.bytes)} | ${ms(row.fcp)} | ${ms(row.lcp)} | ${ms(row.hydrated)} | ` +
          `${ratio(row.vsStock.bytes)} | ${ratio(row.vsStock.lcp)} | ${ratio(row.vsStock.hydrated)} | ${row.protocol ?? '–'} | ${row.earlyHints ?? 0} |`,
      );
    });
  }
  return `${lines.join('\n')}\n`;
}
