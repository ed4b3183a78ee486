// The bench's ssr-shared scenario in smoke mode: two origin processes behind one load, with a real
// redis-server and without. Asserts that it runs end to end and reports every row and target, and
// what the counts prove whatever the machine's speed (renders are counted, not timed); never a timing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { REDIS_SERVER } from '../../scripts/lib/redis-server.mjs';
import { POPULAR_PRODUCTS, SKIPPED_SCENARIOS } from '../../bench/lib/scenarios.mjs';
import { benchRun, isRunning } from '../helpers/bench.mjs';

/** Once the shared tier is in the origin, a shared-hit row must be answered by it. */
/** Every measured row; the -1p ones are one origin loaded as ssr-cached loads it. */
const SETUPS = [
  'l1-hit',
  'l1-hit-no-redis',
  'shared-hit',
  'miss',
  'l1-hit-1p',
  'l1-hit-1p-no-redis',
];
const L1_SETUPS = ['l1-hit', 'l1-hit-no-redis', 'l1-hit-1p', 'l1-hit-1p-no-redis'];

// The app's pages must allow it (a cached "rendered" route in load-paths.json); redis-server missing
// fails below, as the setup must provide it.
const skipped = SKIPPED_SCENARIOS.find(
  ({ name, why }) => name === 'ssr-shared' && !why.startsWith('needs redis-server'),
);

describe(
  'npm run bench -- --scenarios ssg,ssr-shared (smoke mode)',
  {
    timeout: 250_000,
    skip: skipped?.why ?? false,
  },
  () => {
    before(() => {
      assert.ok(
        existsSync(REDIS_SERVER),
        `${REDIS_SERVER} is missing: ssr-shared needs Debian's redis-server (apt-get install redis-server)`,
      );
    });
    const bench = benchRun(
      ['--variants', 'origin', '--scenarios', 'ssg,ssr-shared', '--quick'],
      240_000,
    );
    const setup = (name) => bench.json.shared.summary.setups.find((row) => row.setup === name);

    it('exits 0 and prints the scenario table and its targets', () => {
      assert.equal(
        bench.run.code,
        0,
        `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
      );
      assert.match(bench.run.stdout, /^ssr-shared: /m);
      for (const setupName of SETUPS)
        assert.match(bench.run.stdout, new RegExp(`^${setupName} +[12] +[\\d,.]+ `, 'm'));
      assert.match(
        bench.run.stdout,
        /^renders per distinct page with Redis: \d\.\d\d .*\(target 1\.00: /m,
      );
      assert.match(bench.run.stdout, /^renders per distinct page without Redis: \d\.\d\d /m);
      assert.match(
        bench.run.stdout,
        /^shared-tier hit ÷ miss req\/s: [\d.]+× \(target ≥ 10\.00: (met|not met)/m,
      );
      // The target compares one process with one (ssg); the pair's ratio is information only.
      assert.match(
        bench.run.stdout,
        /^L1 hit, one process with Redis ÷ origin ssg req\/s: [\d.]+× \(target ≥ 0\.80: (met|not met)/m,
      );
      assert.match(bench.run.stdout, /^L1 hit, one process, with Redis ÷ without: [\d.]+× req\/s/m);
      assert.match(
        bench.run.stdout,
        /^L1 hit, two processes with Redis ÷ origin ssg \(one process\) req\/s: [\d.]+× \(two processes share/m,
      );
      assert.doesNotMatch(bench.run.stdout, /^L1 hit ÷ origin ssg/m);
    });

    it('measured every setup validly: both processes answered, no errors, CPU per response read', () => {
      assert.deepEqual(bench.json.settings.scenarios, ['ssg', 'ssr-shared']);
      for (const name of SETUPS) {
        const row = setup(name);
        assert.ok(row, `no ${name} row`);
        assert.equal(row.processes, name.includes('-1p') ? 1 : 2);
        assert.equal(row.status, 'valid', `${name}: ${row.reasons.join('; ')}`);
        assert.equal(row.rounds, 1);
        assert.ok(row.rps.median > 0, `${name}: no requests served`);
        assert.equal(row.errors, 0);
        assert.equal(row.badStatuses, 0);
        assert.ok(row.serverUsPerResponse > 0, `${name}: no server CPU per response`);
      }
      // Both processes of a pair took load: the connections were split between them.
      for (const run of bench.json.shared.runs) assert.ok(run.result.requests > 0);
      // The one-process rows ran one origin each, with REDIS_URL and without, loaded as ssr-cached.
      for (const name of ['l1-hit-1p', 'l1-hit-1p-no-redis']) {
        const entry = bench.json.shared.setups.find((s) => s.name === name);
        assert.equal(entry.pids.length, 1);
        assert.equal(entry.loadAs, 'ssr-cached');
      }
    });

    it('each row was answered by the tier it names, or says it was not', () => {
      for (const name of L1_SETUPS) {
        assert.equal(setup(name).answeredAsExpected, true, setup(name).mismatch);
        assert.ok(setup(name).rendersPerResponse <= 0.01);
        assert.ok(
          setup(name).cacheStatus.every((value) => /(?:^|,)\s*render-cache;\s*hit\b/.test(value)),
          `${name}: ${setup(name).cacheStatus.join(' / ')}`,
        );
      }
      assert.equal(setup('miss').answeredAsExpected, true, setup('miss').mismatch);
      assert.ok(setup('miss').rendersPerResponse >= 0.9);
      const sharedHit = setup('shared-hit');
      // Sampled while nothing else runs; under the load itself a saturated machine may trip the
      // circuit breaker for a moment (its bypasses are counted, not a failure of the harness).
      assert.ok(
        sharedHit.cacheStatus.every((value) => /(?:^|,)\s*shared-cache;\s*hit\b/.test(value)),
        sharedHit.cacheStatus.join(' / '),
      );
      assert.ok(bench.json.shared.runs.find((run) => run.setup === 'shared-hit').sharedHits > 0);
    });

    it('counts renders per distinct page on fresh processes, with Redis and without', () => {
      const { renders } = bench.json.shared.summary;
      // Without Redis each process renders each page exactly once (it coalesces its own misses).
      assert.deepEqual(renders['without-redis'].values, [2]);
      assert.equal(renders['with-redis'].values.length, 1);
      // The popular pages of the app's rendered route: the demo's 100, or all of a shorter list.
      assert.equal(renders['with-redis'].pages, POPULAR_PRODUCTS);
      assert.ok(
        renders['with-redis'].median < renders['without-redis'].median,
        `with Redis ${renders['with-redis'].median} renders per page, without ${renders['without-redis'].median}`,
      );
    });

    it('stopped every origin and redis-server it started', () => {
      const pids = [
        ...bench.json.shared.setups.flatMap((entry) => entry.pids),
        bench.json.shared.redisPid,
        ...bench.json.variants.map((variant) => variant.pid),
      ];
      assert.ok(pids.length >= 10);
      for (const pid of pids) assert.ok(!isRunning(pid), `pid ${pid} still running`);
    });

    it('writes the scenario into the Markdown report', () => {
      const md = readFileSync(join(bench.out, bench.file('.md')), 'utf8');
      assert.match(md, /\*\*ssr-shared: /);
      assert.match(md, /\| setup \| procs \| req\/s \|/);
      assert.match(md, /\| renders per distinct page with Redis \| \d\.\d\d [^|]*\| 1\.00 \|/);
      assert.match(
        md,
        /\| L1 hit, one process with Redis ÷ origin ssg req\/s \| [\d.]+× \| ≥ 0\.80 \| (met|not met)/,
      );
      assert.match(md, /\| l1-hit-1p \| 1 \| [\d,.]+ \|/);
    });
  },
);
