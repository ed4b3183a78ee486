// The paired CPU runs: which pairs run, at what rate, how rounds become a ratio (plain functions),
// and one real run of the bench with a pair (origin with the ceiling on the real build). Asserts
// what was measured and reported, never a timing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBenchPackages } from '../../bench/install.mjs';
import {
  MAX_PAIRED_RATE,
  pairedRate,
  pairedTable,
  pairsIn,
  runPairedRound,
  summarizePairs,
} from '../../bench/lib/paired-cpu.mjs';
import { benchRun, renderedMayRunOut } from '../helpers/bench.mjs';

const row = (variant, median, status = 'valid') => ({
  scenario: 'ssr',
  variant,
  status,
  rps: { median },
});

const run = (round, mine, theirs, problems = []) => ({
  round,
  variant: 'origin',
  reference: 'ceiling',
  scenario: 'ssr',
  rate: 50,
  // 100 renders each: CPU seconds of 100 renders at `mine` and `theirs` µs.
  answered: [100, 100],
  cpuSeconds: [mine * 1e-4, theirs * 1e-4],
  problems,
});

describe('paired CPU runs (plain functions)', () => {
  it('runs a pair only when both of its variants and its scenario run', () => {
    assert.deepEqual(
      pairsIn(['origin', 'stock', 'ceiling'], ['ssg', 'ssr']).map((pair) => pair.variant),
      ['origin'],
    );
    assert.deepEqual(
      pairsIn(['origin', 'origin-app', 'stock', 'ceiling'], ['ssr']).map((pair) => pair.variant),
      ['origin', 'origin-app'],
    );
    assert.deepEqual(
      pairsIn(['origin', 'origin-nocache'], ['ssr']).map((pair) => pair.reference),
      ['origin-nocache'],
    );
    assert.deepEqual(pairsIn(['origin', 'ceiling'], ['ssg']), []);
    assert.deepEqual(pairsIn(['origin', 'stock'], ['ssr']), []);
    // Tracing's pairs, in the scenarios that run.
    assert.deepEqual(
      pairsIn(['origin', 'origin-traced-10', 'origin-traced-0'], ['ssg', 'ssr']).map((pair) => [
        pair.variant,
        pair.scenario,
        pair.target,
      ]),
      [
        ['origin-traced-10', 'ssg', 1.1],
        ['origin-traced-0', 'ssg', 1.02],
      ],
    );
  });

  it('loads both at a share of the slower one, and not at all without valid medians', () => {
    const pair = { variant: 'origin', reference: 'ceiling', scenario: 'ssr', target: 1.05 };
    assert.equal(pairedRate([row('origin', 200), row('ceiling', 250)], pair, 0.4), 80);
    // The pair's own scenario's medians.
    assert.equal(
      pairedRate(
        [row('origin', 200), row('ceiling', 250), { ...row('origin', 50), scenario: 'ssg' }],
        pair,
        0.4,
      ),
      80,
    );
    assert.equal(pairedRate([row('origin', 300), row('ceiling', 250)], pair, 0.4), 100);
    assert.equal(
      pairedRate([row('origin', 200, 'invalid'), row('ceiling', 250)], pair, 0.4),
      undefined,
    );
    assert.equal(pairedRate([row('ceiling', 250)], pair, 0.4), undefined);
    // No faster than one load generator's core sends for both.
    assert.equal(
      pairedRate([row('origin', 20_000), row('ceiling', 25_000)], pair, 0.3),
      MAX_PAIRED_RATE,
    );
  });

  it('takes the median of the per-round ratios, leaving out rounds with problems', () => {
    const [summary] = summarizePairs([
      run(1, 5000, 5000),
      run(2, 6300, 6000),
      run(3, 4000, 5000, ['variant: 3 failed']),
      run(4, 4400, 4000),
    ]);
    assert.equal(summary.invalidRounds, 1);
    assert.deepEqual(
      summary.rounds.map((round) => round.round),
      [1, 2, 4],
    );
    // Ratios 1.00, 1.05, 1.10: the median is the round's ratio, not the ratio of the medians.
    assert.ok(Math.abs(summary.ratio - 1.05) < 1e-9, String(summary.ratio));
    assert.equal(summary.met, true);
    const [missed] = summarizePairs([run(1, 5300, 5000), run(2, 5400, 5000)]);
    assert.equal(missed.met, false);
    assert.match(pairedTable([missed]), /origin ÷ ceiling .* ≤ 1\.05: missed/);
    assert.match(
      pairedTable([summary], { markdown: true }),
      /\| `origin` ÷ `ceiling` \| ssr \| 50 \|/,
    );
    // Rounds of the same pair in another scenario are another summary.
    assert.equal(summarizePairs([{ ...run(1, 5000, 5000), scenario: 'ssg' }]).length, 0);
  });

  it('a round of cache hits in which either server rendered is a round with a problem', async () => {
    // Two answered loads, judged valid; the servers' renders begun as readRenders says.
    const round = (renders) =>
      runPairedRound({
        jobs: [{}, {}],
        checks: [{ valid: true }, { valid: true }],
        pids: [1, 2],
        rate: 10,
        duration: 1,
        run: async () => ({ requests: 10, errors: 0, timeouts: 0, non2xx: 0, statusCodes: {} }),
        readCpuSeconds: () => 1,
        readRenders: async (side) => renders[side].shift(),
      });
    const rendered = await round([
      [5, 5],
      [7, 9],
    ]);
    assert.deepEqual(
      rendered.problems.filter((problem) => problem.includes('round of cache hits')),
      [
        'reference: rendered 2 page(s) during a round of cache hits (entries gone stale, refreshed)',
      ],
    );
    const hits = await round([
      [5, 5],
      [9, 9],
    ]);
    assert.deepEqual(
      hits.problems.filter((problem) => problem.includes('round of cache hits')),
      [],
    );
  });

  it('says so when no round was valid', () => {
    const [summary] = summarizePairs([run(1, 5000, 5000, ['reference: 1 failed'])]);
    assert.equal(summary.ratio, undefined);
    assert.equal(summary.met, undefined);
    assert.match(pairedTable([summary]), /no valid round/);
  });
});

before(() => ensureBenchPackages(), { timeout: 10 * 60_000 });

// The pairs measure CPU per uncached render (ssr): on a route whose pages a short run uses up, the
// origin's ssr row is refused (short-route.test.mjs), so there is no rate to pair at.
const skip = renderedMayRunOut()
  ? 'load-paths.json\'s "rendered" route is cached with few pages: the origin\'s ssr is refused'
  : false;

describe('npm run bench with a pair', { timeout: 120_000, skip }, () => {
  const bench = benchRun(
    [
      '--variants',
      'origin,ceiling',
      '--scenarios',
      'ssr',
      '--quick',
      '--rounds',
      '2',
      '--paired-cpu',
      '0.2',
      // As the smoke run (bench.test.mjs): 50 connections' renders may all finish after a 1-s run
      // on a busy machine ("no response at all"), leaving no valid row to set the pair's rate.
      '--connections',
      '8',
    ],
    110_000,
  );

  it('loads the pair together in every round and reports their CPU per render', () => {
    assert.equal(
      bench.run.code,
      0,
      `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
    );
    assert.equal(bench.json.settings.pairedCpu, 0.2);
    assert.deepEqual(
      bench.json.pairedRuns.map((one) => [one.round, one.variant, one.reference, one.scenario]),
      [
        [1, 'origin', 'ceiling', 'ssr'],
        [2, 'origin', 'ceiling', 'ssr'],
      ],
      bench.run.stdout,
    );
    const slower = Math.min(
      ...bench.json.summary.filter((one) => one.scenario === 'ssr').map((one) => one.rps.median),
    );
    for (const one of bench.json.pairedRuns) {
      assert.deepEqual(one.problems, []);
      assert.equal(one.rate, Math.max(1, Math.round(slower * 0.2)));
      for (const i of [0, 1]) {
        assert.ok(one.answered[i] > 0, `round ${one.round}: nothing answered`);
        assert.ok(one.cpuSeconds[i] > 0, `round ${one.round}: no CPU read`);
      }
    }
    const [summary] = bench.json.paired;
    assert.equal(summary.rounds.length, 2);
    assert.ok(summary.ratio > 0);
    assert.match(bench.run.stdout, /^Server CPU per answer, in pairs/m);
    const md = readFileSync(join(bench.out, bench.file('.md')), 'utf8');
    assert.match(md, /\*\*Server CPU per answer, in pairs .*\n\n\| pair \| scenario \|/);
  });
});
