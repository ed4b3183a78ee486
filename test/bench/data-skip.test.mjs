// ssr-data on an app whose load-paths.json names no pages made of data: skipped, saying why, the
// other scenarios run as ever. Correctness only, never a timing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOAD_PATHS_FILE } from '../../scripts/lib/load-paths.mjs';
import { benchRun } from '../helpers/bench.mjs';

const WHY = /load-paths\.json names no "data" page/;

describe('npm run bench on an app without pages made of data', { timeout: 60_000 }, () => {
  const bench = benchRun(
    ['--variants', 'origin', '--scenarios', 'ssg', '--quick', '--duration', '1'],
    50_000,
    {
      // The app's own pages, less its "data".
      setup(dir) {
        const own = JSON.parse(readFileSync(LOAD_PATHS_FILE, 'utf8'));
        delete own.data;
        const file = join(dir, 'input-load-paths.json');
        writeFileSync(file, JSON.stringify(own));
        return { LOAD_PATHS: file };
      },
    },
  );

  it('skips ssr-data with its reason and runs the rest', () => {
    assert.equal(bench.run.code, 0, `${bench.run.stdout}\n${bench.run.stderr}`);
    assert.match(bench.run.stdout, new RegExp(`^  skipped: +ssr-data: ${WHY.source}`, 'm'));
    const skipped = bench.json.settings.skipped.find((one) => one.name === 'ssr-data');
    assert.match(skipped.why, WHY);
    assert.equal(bench.json.summary.find((row) => row.scenario === 'ssg').status, 'valid');
  });

  it('refuses it when asked for by name, saying why', async () => {
    const { runBench } = await import('../helpers/bench.mjs');
    const file = join(bench.out, 'input-load-paths.json');
    const asked = await runBench(['--scenarios', 'ssr-data', '--quick'], 20_000, {
      env: { LOAD_PATHS: file },
    });
    assert.equal(asked.code, 1);
    assert.match(
      asked.stderr,
      /scenario "ssr-data" cannot run here: load-paths\.json names no "data" page/,
    );
  });
});
