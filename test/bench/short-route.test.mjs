// The bench on an app's own page whose load-paths.json lists only a few values (the guide's own
// example lists two): every row measures what its scenario says, or is refused with what to change.
// Here the app's own cached route (the demo's products, or yours) named by two of its values, as a
// user's two slugs would be. Correctness only, never a timing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOAD_PATHS_FILE, readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { benchRun } from '../helpers/bench.mjs';

const VARIANTS = ['origin', 'stock'];
const SCENARIOS = ['ssr', 'ssr-cached', 'mixed'];
const RENDERED = readLoadPaths().rendered;
const skip = !RENDERED?.cached
  ? 'load-paths.json names no "rendered" route with a shared-cache policy ("cached": true)'
  : RENDERED.count < 2 || RENDERED.status !== 200
    ? 'load-paths.json\'s "rendered" route has fewer than two pages answered 200'
    : false;

describe('npm run bench on a cached route with two values', { timeout: 150_000, skip }, () => {
  const bench = benchRun(
    [
      ...['--variants', VARIANTS.join(','), '--scenarios', SCENARIOS.join(',')],
      ...['--duration', '1', '--rounds', '1', '--quick'],
      // As the smoke run: 50 connections' renders in one process may all finish after a 1-s run on
      // a busy machine (the stock server's ssr row: "no response at all", a clean-clone CI run).
      ...['--connections', '8'],
    ],
    140_000,
    {
      // The app's own pages, its rendered route cut down to two of its values.
      setup(dir) {
        const own = JSON.parse(readFileSync(LOAD_PATHS_FILE, 'utf8'));
        const file = join(dir, 'input-load-paths.json');
        writeFileSync(
          file,
          JSON.stringify({
            ...own,
            rendered: {
              path: RENDERED.path,
              values: [RENDERED.valueAt(0), RENDERED.valueAt(1)],
              cached: true,
            },
          }),
        );
        return { LOAD_PATHS: file };
      },
    },
  );
  const row = (variant, scenario) =>
    bench.json.summary.find((one) => one.variant === variant && one.scenario === scenario);

  it('runs, and its checks accept the two pages (they are distinct, and each its own)', () => {
    assert.equal(
      bench.run.code,
      0,
      `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
    );
    assert.ok(bench.json, `no JSON in ${bench.out}`);
    for (const variant of VARIANTS)
      for (const scenario of SCENARIOS)
        assert.deepEqual(
          bench.json.variants.find((v) => v.name === variant).checks[scenario].problems,
          [],
          `${variant}/${scenario}`,
        );
  });

  it('measures the popular pages as ssr-cached says, on every variant', () => {
    for (const variant of VARIANTS) {
      const measured = row(variant, 'ssr-cached');
      assert.equal(measured.status, 'valid', `${variant}: ${measured.reasons.join('; ')}`);
    }
  });

  it('refuses the rows that would count cache hits as renders, saying what to change', () => {
    for (const scenario of ['ssr', 'mixed']) {
      const refused = row('origin', scenario);
      assert.equal(refused.status, 'invalid', scenario);
      assert.match(
        refused.reasons.join('; '),
        /answers came from a cache \(Cache-Status: hit\), not from a render: load-paths\.json's "rendered" \(2 values of \{\w+\}\) repeats pages within a run and its route is cached\. Name more pages there/,
        scenario,
      );
    }
    // The stock server has no render cache: it renders every request, so its rows stand.
    for (const scenario of ['ssr', 'mixed'])
      assert.equal(
        row('stock', scenario).status,
        'valid',
        row('stock', scenario).reasons.join('; '),
      );
  });
});
