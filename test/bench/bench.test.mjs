// The bench in smoke mode: a second per scenario, three variants, on the app's own pages
// (load-paths.json) and every scenario they allow. Asserts correctness only (every variant started,
// answered every scenario validly or was refused with the reason, the files and the chart were
// written), never a timing: speed is the bench's output, not something a test on a shared machine
// can pin down.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBenchPackages } from '../../bench/install.mjs';
import { ensureBuilds } from '../../bench/lib/build.mjs';
import { SCENARIO_NAMES } from '../../bench/lib/scenarios.mjs';
import { benchRun, isRunning, renderedMayRunOut } from '../helpers/bench.mjs';

const VARIANTS = ['origin', 'origin-cluster', 'stock'];
/**
 * What the app's pages allow (the bench skips the rest, saying why), but those that start servers
 * of their own: ssr-shared (shared.test.mjs) and ssr-personal (personal.test.mjs).
 */
const SCENARIOS = SCENARIO_NAMES.filter((name) => !['ssr-shared', 'ssr-personal'].includes(name));
/**
 * Scenarios whose page must be rendered for every request: refused on a route whose pages a smoke
 * run may use up (renderedMayRunOut), allowed here only then, never for the demo's 999,999 ids.
 */
const RENDERS_EACH = ['ssr', 'mixed'];
const MAY_RUN_OUT = renderedMayRunOut();
const CACHE_HITS = /answers came from a cache \(Cache-Status: hit\), not from a render/;

/** Whether the bench refused `scenario` on this variant for that reason, and that reason only. */
function refusedForCacheHits(variant, scenario, reasons) {
  return (
    MAY_RUN_OUT &&
    RENDERS_EACH.includes(scenario) &&
    variant !== 'stock' &&
    reasons.length > 0 &&
    reasons.every((reason) => CACHE_HITS.test(reason))
  );
}

// The peers install once (bench/install.mjs; npm's cache makes it seconds) before the timed run,
// which then finds them installed: a first install is not the bench's time to spend.
before(() => ensureBenchPackages(), { timeout: 10 * 60_000 });
// And the builds the run would make first (the app's, the stock server's): on a slow day the stock
// build took 49 s of the run's budget and the run was stopped before its end (a clean-clone CI run).
before(() => ensureBuilds({ stock: true, skip: false, log: () => {} }), { timeout: 10 * 60_000 });

describe('npm run bench (smoke mode)', { timeout: 215_000 }, () => {
  const bench = benchRun(
    [
      '--variants',
      VARIANTS.join(','),
      // ssr-shared and ssr-personal start their own servers: their own tests cover them.
      '--scenarios',
      SCENARIOS.join(','),
      '--duration',
      '1',
      '--rounds',
      '1',
      '--quick',
      '--equal-load',
      '0.5',
      // 50 connections' renders, interleaved in one process, may all finish after a 1-s run on a
      // busy machine ("no response at all"); 8 still load every variant and answer within it.
      '--connections',
      '8',
    ],
    // ssr-data adds a process per variant, its burst and warming pass: about half a minute.
    205_000,
  );

  it('exits 0 and prints the table', () => {
    assert.equal(
      bench.run.code,
      0,
      `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
    );
    for (const scenario of SCENARIOS)
      assert.match(bench.run.stdout, new RegExp(`^${scenario}: `, 'm'));
    assert.match(bench.run.stdout, /Critical CSS: on/);
    assert.match(bench.run.stdout, /Pinning: /);
  });

  it('writes JSON with the settings asked for', () => {
    assert.ok(bench.json, `no JSON in ${bench.out}`);
    assert.deepEqual(bench.json.settings.variants, VARIANTS);
    assert.deepEqual(bench.json.settings.scenarios, SCENARIOS);
    assert.equal(bench.json.settings.rounds, 1);
    assert.equal(bench.json.settings.duration, 1);
    assert.equal(typeof bench.json.settings.pin.enabled, 'boolean');
    assert.ok(
      bench.json.machine.cpuModel && bench.json.machine.cpus >= 1 && bench.json.machine.node,
    );
  });

  it('started every variant and stopped it afterwards', () => {
    for (const name of VARIANTS) {
      const variant = bench.json.variants.find((candidate) => candidate.name === name);
      assert.ok(variant, `${name} missing`);
      assert.equal(variant.started, true, `${name} did not start: ${variant.error}`);
      // Its process for most scenarios, and one of its own for ssr-data.
      assert.equal(variant.pids.length, SCENARIOS.includes('ssr-data') ? 2 : 1, name);
      for (const pid of variant.pids)
        assert.ok(!isRunning(pid), `${name} (pid ${pid}) still running`);
    }
  });

  it(
    "counts what reached each process's API, and the burst of distinct pages on ssr-data's",
    {
      skip: !SCENARIOS.includes('ssr-data') && 'load-paths.json names no "data" page',
    },
    () => {
      const row = (variant, scenario) =>
        bench.json.summary.find((one) => one.variant === variant && one.scenario === scenario);
      for (const name of VARIANTS) {
        // Every variant's renders asked its API: a number per page, from the fixed-rate runs.
        for (const scenario of ['ssr', 'ssr-data'].filter((one) => SCENARIOS.includes(one))) {
          const { upstreamPerPage } = row(name, scenario);
          assert.equal(typeof upstreamPerPage, 'number', `${name}/${scenario}`);
        }
        const burst = bench.json.variants.find((one) => one.name === name).bursts['ssr-data'];
        assert.deepEqual(burst.statuses, { 200: burst.pages }, name);
        assert.equal(burst.notRendered, 0, `${name}: a page of the burst was not rendered`);
        assert.ok(burst.upstreamRequests >= burst.pages, `${name}: each page's own data, at least`);
      }
      // Without a data cache, every render asks for what the pages share; the origin's asks once.
      const stockBurst = bench.json.variants.find((one) => one.name === 'stock').bursts['ssr-data'];
      assert.equal(stockBurst.mostAsked.requests, stockBurst.pages);
      const originBurst = bench.json.variants.find((one) => one.name === 'origin').bursts[
        'ssr-data'
      ];
      assert.equal(originBurst.byPath[stockBurst.mostAsked.path], 1);
      assert.match(
        bench.run.stdout,
        /^Data \(ssr-data\): the origin's API was asked [\d.]+ times per page/m,
      );
    },
  );

  it('every variant answered every scenario validly, with load actually served', () => {
    for (const name of VARIANTS) {
      for (const scenario of SCENARIOS) {
        const row = bench.json.summary.find(
          (candidate) => candidate.variant === name && candidate.scenario === scenario,
        );
        assert.ok(row, `no row for ${name}/${scenario}`);
        if (row.status === 'invalid' && refusedForCacheHits(name, scenario, row.reasons)) continue;
        assert.equal(
          row.status,
          'valid',
          `${name}/${scenario}: ${row.status}: ${row.reasons.join('; ')}`,
        );
        assert.equal(row.rounds, 1);
        assert.ok(row.rps.median > 0, `${name}/${scenario}: no requests served`);
        assert.equal(row.errors, 0);
        assert.equal(row.badStatuses, 0);
      }
    }
    // The stock server sends an ETag and honours If-None-Match.
    assert.equal(
      bench.json.variants.find((variant) => variant.name === 'stock').checks.revalidate
        .revalidation,
      '304',
    );
  });

  it('ran every variant at the same constant rate per scenario, with valid answers', () => {
    assert.equal(bench.json.settings.equalLoad, 0.5);
    for (const scenario of SCENARIOS) {
      const runs = bench.json.equalLoadRuns.filter((run) => run.scenario === scenario);
      assert.deepEqual(runs.map((run) => run.variant).sort(), [...VARIANTS].sort(), scenario);
      assert.ok(
        runs.every((run) => run.round === 1),
        scenario,
      );
      const slowest = Math.min(
        ...bench.json.summary
          .filter((row) => row.scenario === scenario && row.status === 'valid')
          .map((row) => row.rps.median),
      );
      for (const run of runs) {
        assert.equal(
          run.rate,
          Math.min(3000, Math.max(1, Math.round(slowest * 0.5))),
          `${scenario}: half the slowest median, capped`,
        );
        if (refusedForCacheHits(run.variant, scenario, run.problems)) continue;
        assert.deepEqual(run.problems, [], `${run.variant}/${scenario}`);
        assert.ok(
          run.result.requests > 0 && run.result.latency.p99 >= run.result.latency.p50,
          `${run.variant}/${scenario}`,
        );
      }
    }
    assert.match(bench.run.stdout, /^Latency at equal load: /m);
  });

  it('writes the Markdown table with machine, settings and date', () => {
    const md = readFileSync(join(bench.out, bench.file('.md')), 'utf8');
    assert.match(md, /\| Scenario \| # \| Variant \| req\/s \(median\)/);
    assert.match(md, /\*\*Machine:\*\*/);
    assert.match(md, /Node v\d+/);
    assert.match(md, /\*\*Critical CSS:\*\* on/);
    assert.match(md, /Measured \d{4}-\d{2}-\d{2} /);
    assert.match(
      md,
      /\*\*Latency at equal load: .*\n\n\| scenario \| rate req\/s \| origin \| origin-cluster \| stock \|/,
    );
    for (const name of VARIANTS) assert.ok(md.includes(`\`${name}\``), `${name} not in the table`);
  });

  it('draws an SVG chart with a bar per variant and scenario', () => {
    const svg = readFileSync(join(bench.out, bench.file('.svg')), 'utf8');
    assert.ok(svg.startsWith('<svg'), 'not an SVG document');
    assert.ok(svg.trimEnd().endsWith('</svg>'));
    const bars = [
      ...svg.matchAll(
        /<rect class="bar" data-scenario="([^"]+)" data-variant="([^"]+)" data-status="([^"]+)"/g,
      ),
    ];
    assert.equal(bars.length, VARIANTS.length * SCENARIOS.length);
    for (const name of VARIANTS) {
      for (const scenario of SCENARIOS) {
        const bar = bars.find(([, s, v]) => s === scenario && v === name);
        assert.ok(bar, `no bar for ${name}/${scenario}`);
        const row = bench.json.summary.find(
          (one) => one.variant === name && one.scenario === scenario,
        );
        assert.equal(bar[3], row.status, `${name}/${scenario}: the bar shows the row's result`);
        if (!refusedForCacheHits(name, scenario, row.reasons)) assert.equal(bar[3], 'valid');
      }
    }
  });
});
