// The table of a scenario measured in setups of its own (ssr-shared, ssr-personal): a row per
// setup, its targets under it, for the terminal and for the Markdown report. Each scenario's report
// gives its columns (headers, a row's cells) and says how many of the first ones are text.
import { CLIENT_BOUND, escapeCell } from './report.mjs';

/** A target's outcome in words. */
export function verdict(target) {
  if (target.met === undefined) return `not measured (${target.why})`;
  if (target.reference) return target.met ? 'as expected' : 'not as expected';
  return target.met ? 'met' : `not met${target.why ? ` (${target.why})` : ''}`;
}

/** A row's result column: its status, or what marks it (not as named, client-bound), or ok. */
export function result(row) {
  if (row.status !== 'valid') return row.status.toUpperCase();
  const marks = [];
  if (row.mismatch) marks.push(`NOT AS NAMED: ${row.mismatch}`);
  if (row.loadCpu !== undefined && row.loadCpu >= CLIENT_BOUND) marks.push('client-bound');
  return marks.length ? marks.join(', ') : 'ok';
}

/**
 * The scenario's lines for the terminal.
 * @param {{ setups: any[], targets: any[], info: string[] }} summary
 * @param {{ title: string, headers: string[], cells: (row: any) => string[], textColumns: number }} table
 */
export function setupTerminal(summary, { title, headers, cells, textColumns }) {
  const table = [headers, ...summary.setups.map(cells)];
  const widths = headers.map((_, i) => Math.max(...table.map((line) => line[i].length)));
  const left = (i) => i < textColumns || i === headers.length - 1;
  const line = (values) =>
    values
      .map((value, i) => (left(i) ? value.padEnd(widths[i]) : value.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    title,
    line(headers),
    widths.map((width) => '─'.repeat(width)).join('  '),
    ...table.slice(1).map(line),
    ...summary.setups
      .filter((row) => row.status !== 'valid')
      .map((row) => `  ${row.setup} ${row.status}: ${row.reasons.slice(0, 3).join('; ')}`),
    ...summary.targets.map(
      (target) => `${target.name}: ${target.text} (target ${target.target}: ${verdict(target)})`,
    ),
    ...summary.info,
  ].join('\n');
}

/**
 * The scenario's tables in Markdown: the setups, then the targets.
 * @param {{ setups: any[], targets: any[] }} summary
 * @param {{ headers: string[], cells: (row: any) => string[], textColumns: number }} table
 */
export function setupMarkdownTables(summary, { headers, cells, textColumns }) {
  return [
    `| ${headers.join(' | ')} |`,
    `|${headers.map((_, i) => (i < textColumns || i === headers.length - 1 ? '---' : '--:')).join('|')}|`,
    ...summary.setups.map((row) => `| ${cells(row).map(escapeCell).join(' | ')} |`),
    '',
    '| figure | value | target | result |',
    '|---|--:|---|---|',
    ...summary.targets.map(
      (target) =>
        `| ${escapeCell(target.name)} | ${escapeCell(target.text)} | ${escapeCell(target.target)} | ${escapeCell(verdict(target))} |`,
    ),
  ];
}
