// The results as a picture: one panel per scenario (their scales differ by orders of magnitude, so
// one shared axis would flatten the SSR bars to nothing), one horizontal bar per variant, same
// colour for a variant in every panel. Hand-written SVG: no chart library, no external assets.
import { CLIENT_BOUND } from './report.mjs';

const PALETTE = {
  origin: '#1b6ac9',
  stock: '#7a7a7a',
  'express-commonengine': '#d9822b',
  fastify: '#2f9e44',
  'bun-elysia': '#ae3ec9',
  ceiling: '#222222',
};
const FALLBACK_COLOURS = ['#0b7285', '#c92a2a', '#5c940d', '#862e9c'];

const WIDTH = 940;
const LABEL_W = 190;
const BAR_MAX = 420;
const BAR_H = 18;
const BAR_GAP = 7;
const PANEL_TOP = 30;
const PANEL_GAP = 22;

const escapeXml = (text) =>
  String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * @param {{ rows: import('./report.mjs').SummaryRow[], title: (scenario: string) => string, subtitle: string[] }} input
 * @returns {string}
 */
export function barChart({ rows, title, subtitle }) {
  const scenarios = [...new Set(rows.map((row) => row.scenario))];
  const variants = [...new Set(rows.map((row) => row.variant))];
  const colour = (variant) =>
    PALETTE[variant] ?? FALLBACK_COLOURS[variants.indexOf(variant) % FALLBACK_COLOURS.length];
  const headerH = 34 + subtitle.length * 16;
  const panelH = PANEL_TOP + variants.length * (BAR_H + BAR_GAP);
  const height = headerH + scenarios.length * (panelH + PANEL_GAP) + 10;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="3"/></pattern></defs>',
    `<text x="16" y="24" font-size="16" font-weight="600">Requests per second (median of interleaved rounds, higher is better)</text>`,
    ...subtitle.map(
      (line, i) => `<text x="16" y="${44 + i * 16}" fill="#555555">${escapeXml(line)}</text>`,
    ),
  ];
  scenarios.forEach((scenario, s) => {
    const top = headerH + s * (panelH + PANEL_GAP);
    const group = rows.filter((row) => row.scenario === scenario);
    const max = Math.max(
      1,
      ...group.filter((row) => row.status === 'valid' && row.rps).map((row) => row.rps.median),
    );
    out.push(`<g class="panel" data-scenario="${escapeXml(scenario)}">`);
    out.push(
      `<text x="16" y="${top + 18}" font-size="13" font-weight="600">${escapeXml(title(scenario))}</text>`,
    );
    out.push(
      `<line x1="${LABEL_W}" y1="${top + PANEL_TOP - 4}" x2="${LABEL_W}" y2="${top + panelH}" stroke="#999999"/>`,
    );
    variants.forEach((variant, v) => {
      const row = group.find((candidate) => candidate.variant === variant);
      const y = top + PANEL_TOP + v * (BAR_H + BAR_GAP);
      const valid = row?.status === 'valid' && row.rps;
      const width = valid
        ? Math.max(1, (row.rps.median / max) * BAR_MAX)
        : row?.status === 'invalid'
          ? BAR_MAX * 0.25
          : 0;
      const fill = valid ? colour(variant) : 'url(#hatch)';
      const label = valid
        ? `${integer.format(row.rps.median)} req/s${row.vsStock !== undefined && variant !== 'stock' ? ` (${row.vsStock.toFixed(2)}× stock)` : ''}` +
          (row.revalidation === 'ignored' || row.revalidation === 'no-etag'
            ? ' · full pages, no 304'
            : '') +
          (row.loadCpu !== undefined && row.loadCpu >= CLIENT_BOUND ? ' · client-bound' : '')
        : row?.status === 'unsupported'
          ? 'CANNOT SERVE THIS APP'
          : (row?.status ?? 'not run').toUpperCase();
      out.push(
        `<text x="${LABEL_W - 8}" y="${y + 13}" text-anchor="end">${escapeXml(variant)}</text>`,
      );
      out.push(
        `<rect class="bar" data-scenario="${escapeXml(scenario)}" data-variant="${escapeXml(variant)}" data-status="${escapeXml(row?.status ?? 'missing')}" x="${LABEL_W}" y="${y}" width="${width.toFixed(1)}" height="${BAR_H}" fill="${fill}"><title>${escapeXml(`${variant} · ${scenario}: ${label}`)}</title></rect>`,
      );
      out.push(
        `<text x="${LABEL_W + width + 6}" y="${y + 13}" fill="${valid ? '#222222' : '#c92a2a'}">${escapeXml(label)}</text>`,
      );
    });
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
