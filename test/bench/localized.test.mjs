// The bench on a localized app ("localize": true): the app in src/ built in three locales (angular.json's
// `bench-i18n`, into dist-bench/ and reused while current: bench/lib/localized-build.mjs), its pages
// named under the source locale's prefix as `ng new --locales` names them (schematics/template.cjs).
// Every variant must start and answer validly, the peers serving that one locale under its prefix;
// every page and file measured must be that locale's. Correctness only, never a timing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBenchPackages } from '../../bench/install.mjs';
import {
  ensureLocalizedBuilds,
  hasLocalizedConfiguration,
  I18N_DIST,
  STOCK_I18N_DIST,
} from '../../bench/lib/localized-build.mjs';
import { LOAD_PATHS_FILE } from '../../scripts/lib/load-paths.mjs';
import { benchRun } from '../helpers/bench.mjs';

/** The origin, Angular's stock server and every peer (ceiling and koa-floor share in-memory.mjs). */
const VARIANTS = [
  'origin',
  'stock',
  'express-commonengine',
  'fastify',
  'bun-elysia',
  'ceiling',
  'koa-floor',
];
/** The prerendered page, a rendered one (and the 404 its check asks for), the files a page loads. */
const SCENARIOS = ['ssg', 'ssr', 'mixed'];
const SOURCE_LOCALE = 'en-US';
const PREFIX = `/${SOURCE_LOCALE}`;

/** load-paths.json as a localized app has it: every page under the source locale's prefix. */
function localizedLoadPaths() {
  const paths = JSON.parse(readFileSync(LOAD_PATHS_FILE, 'utf8'));
  const prefixed = (path) => `${PREFIX}${path === '/' ? '' : path}`;
  for (const key of ['prerendered', 'clientOnly', 'notFound'])
    if (typeof paths[key] === 'string') paths[key] = prefixed(paths[key]);
  for (const key of ['rendered', 'data', 'personal'])
    if (paths[key]) paths[key].path = prefixed(paths[key].path);
  if (paths.personal) paths.personal.private.path = prefixed(paths.personal.private.path);
  return paths;
}

const skip = hasLocalizedConfiguration()
  ? false
  : 'angular.json has no bench-i18n configuration: the app is localized itself (ng new --locales), and bench.test.mjs runs the bench on it';

// The peers and the two localized builds before the timed run (the builds only when stale).
if (!skip) {
  before(() => ensureBenchPackages(), { timeout: 10 * 60_000 });
  before(() => ensureLocalizedBuilds(), { timeout: 10 * 60_000 });
}

describe('npm run bench on a localized app (smoke mode)', { timeout: 150_000, skip }, () => {
  const bench = benchRun(
    [
      ...['--variants', VARIANTS.join(','), '--scenarios', SCENARIOS.join(',')],
      // No warm-ups: what is checked is the answers, and the run stays within a minute.
      ...['--duration', '1', '--rounds', '1', '--quick', '--warmup', '0', '--render-warmup', '0'],
      // 50 cold renders interleaved in one process may all end after the 1-s run on a busy
      // machine ("no response at all"); 8 connections answer within it.
      ...['--connections', '8'],
    ],
    140_000,
    {
      setup(dir) {
        const file = join(dir, 'input-load-paths.json');
        writeFileSync(file, JSON.stringify(localizedLoadPaths()));
        return { LOAD_PATHS: file, BENCH_DIST: I18N_DIST, BENCH_STOCK_DIST: STOCK_I18N_DIST };
      },
    },
  );

  it('runs, and says which locale it measures', () => {
    assert.equal(
      bench.run.code,
      0,
      `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
    );
    assert.ok(bench.json, `no JSON in ${bench.out}`);
    assert.match(
      bench.run.stdout,
      /^Measuring a localized build \(en-US, fr, de\): one locale measured, en-US/m,
    );
    assert.equal(bench.json.build.locale, SOURCE_LOCALE);
    assert.equal(bench.json.build.sitePrefix, PREFIX);
    assert.match(bench.json.settings.localized, /every other variant serves en-US alone/);
  });

  it('starts every variant, and each answers every scenario validly', () => {
    for (const name of VARIANTS) {
      const variant = bench.json.variants.find((one) => one.name === name);
      assert.ok(variant?.started, `${name} did not start: ${variant?.error}`);
      for (const scenario of SCENARIOS)
        assert.deepEqual(variant.checks[scenario].problems, [], `${name}/${scenario}`);
    }
    for (const row of bench.json.summary)
      assert.equal(row.status, 'valid', `${row.variant}/${row.scenario}: ${row.reasons}`);
    assert.equal(bench.json.summary.length, VARIANTS.length * SCENARIOS.length);
  });

  it("measures the locale's own pages and files, under its prefix", () => {
    const files = Object.keys(bench.json.build.files);
    assert.ok(files.length >= 3, files.join(', '));
    for (const path of files) assert.ok(path.startsWith(`${PREFIX}/`) || path === PREFIX, path);
    for (const scenario of ['ssg', 'ssr']) {
      const title = bench.run.stdout.match(new RegExp(`^${scenario}: .*$`, 'm'))?.[0];
      assert.match(title ?? '', new RegExp(`${PREFIX}\\b`), `${scenario}'s title`);
    }
  });
});
