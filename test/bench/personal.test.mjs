// The bench's ssr-personal scenario in smoke mode: an origin and the stock server, each setup loaded
// for a second, the floor measured after. Asserts that it runs end to end and reports every row and
// target, and what the counts prove whatever the machine's speed (parts are counted, not timed);
// never a timing. And that its check fails an answer holding another visitor's part: the real
// origin behind a proxy that hands one visitor's cookie to another.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBenchPackages } from '../../bench/install.mjs';
import { ensureBuilds } from '../../bench/lib/build.mjs';
import { measuredSite } from '../../bench/lib/measured-site.mjs';
import { describeBuild, SKIPPED_SCENARIOS } from '../../bench/lib/scenarios.mjs';
import { checkPersonal } from '../../bench/lib/validate.mjs';
import { startOrigin } from '../../scripts/lib/origin-process.mjs';
import { APP_DIST } from '../../scripts/lib/paths.mjs';
import { benchRun, isRunning } from '../helpers/bench.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';

const SETUPS = ['anonymous', 'returning', 'new', 'private', 'stock'];
// The app's pages must allow it: a "personal" part on a cached "rendered" route (load-paths.json).
const skipped = SKIPPED_SCENARIOS.find(({ name }) => name === 'ssr-personal')?.why ?? false;

// The peers and the stock build, once, before the timed run: not the bench's time to spend.
before(
  async () => {
    if (skipped) return;
    await ensureBenchPackages();
    ensureBuilds({ stock: true, skip: false, log: () => undefined });
  },
  { timeout: 10 * 60_000 },
);

describe(
  'npm run bench -- --scenarios ssr-personal (smoke mode)',
  { timeout: 90_000, skip: skipped },
  () => {
    const bench = benchRun(
      ['--scenarios', 'ssr-personal', '--quick', '--connections', '8'],
      80_000,
    );
    const setup = (name) => bench.json.personal.summary.setups.find((row) => row.setup === name);

    it('exits 0 and prints the scenario table and its targets', () => {
      assert.equal(
        bench.run.code,
        0,
        `exit ${bench.run.code}\n${bench.run.stdout}\n${bench.run.stderr}`,
      );
      assert.match(bench.run.stdout, /^ssr-personal: /m);
      for (const name of SETUPS)
        assert.match(bench.run.stdout, new RegExp(`^${name} +(origin|stock) +[\\d,.]+ `, 'm'));
      for (const target of [
        /^returning visitors ÷ the anonymous page, req\/s: [\d.]+× .*\(target ≥ 0\.50: (met|not met)/m,
        /^returning visitors ÷ the anonymous page, by server CPU per response: [\d.]+× .*\(target ≥ 0\.50: (met|not met)/m,
        /^new visitors ÷ the private route, req\/s: [\d.]+× .*\(target ≥ 5\.00: (met|not met)/m,
        /^what a new visitor adds ÷ the floor \(a bare renderApplication\), server CPU: -?[\d.]+× .*\(target ≤ 1\.50/m,
      ])
        assert.match(bench.run.stdout, target);
      assert.match(bench.run.stdout, /^the private route ÷ the anonymous page: [\d.]+× req\/s/m);
    });

    it('measured every setup validly, with load served and server CPU read', () => {
      assert.deepEqual(bench.json.settings.scenarios, ['ssr-personal']);
      for (const name of SETUPS) {
        const row = setup(name);
        assert.ok(row, `no ${name} row`);
        assert.equal(row.status, 'valid', `${name}: ${row.reasons.join('; ')}`);
        assert.equal(row.rounds, 1);
        assert.ok(row.rps.median > 0, `${name}: no requests served`);
        assert.equal(row.errors, 0);
        assert.equal(row.badStatuses, 0);
        assert.ok(row.serverUsPerResponse > 0, `${name}: no server CPU per response`);
        assert.equal(typeof row.latencyP99, 'number', name);
      }
    });

    it("answered each setup's parts as it names them, by the origin's counts", () => {
      // No part in an answer without the cookie.
      assert.equal(setup('anonymous').partRendersPerResponse, 0);
      assert.equal(setup('anonymous').keptPartsPerResponse, 0);
      // Returning visitors: their parts, kept since the sweep before the run, never rendered again.
      assert.ok(setup('returning').partRendersPerResponse <= 0.01);
      assert.ok(setup('returning').keptPartsPerResponse >= 0.99);
      // New visitors: a part rendered for every one, none kept.
      assert.ok(setup('new').partRendersPerResponse >= 0.99);
      assert.equal(setup('new').keptPartsPerResponse, 0);
      // The stock server has no /healthz counts: no parts.
      assert.equal(setup('stock').partRendersPerResponse, undefined);
    });

    it('measured the floor of a part after the rounds', () => {
      const { floor } = bench.json.personal;
      assert.ok(floor.result, floor.error);
      for (const kind of ['bare', 'empty part', 'part', 'page'])
        assert.ok(floor.result[kind].cpuUs > 0, kind);
      assert.match(bench.run.stdout, /^the floor \(bench\/part-floor\.mjs, /m);
    });

    it('stopped the origin and the stock server it started', () => {
      const pids = [...new Set(bench.json.personal.setups.map((entry) => entry.pid))];
      assert.equal(pids.length, 2);
      for (const pid of pids) assert.ok(!isRunning(pid), `pid ${pid} still running`);
    });

    it('writes the scenario into the Markdown report', () => {
      const md = readFileSync(join(bench.out, bench.file('.md')), 'utf8');
      assert.match(md, /\*\*ssr-personal: /);
      assert.match(md, /\| setup \| server \| req\/s \|/);
      assert.match(md, /\| returning \| origin \| [\d,.]+ \|/);
      assert.match(md, /\| new visitors ÷ the private route, req\/s \| [\d.]+× [^|]*\| ≥ 5\.00 \|/);
    });
  },
);

describe("ssr-personal's check of a visitor's answer", { timeout: 60_000, skip: skipped }, () => {
  let origin;
  let proxy;
  let build;
  /** Whether the proxy hands every visitor the first one's cookie (c000…). */
  let swap = false;
  before(async () => {
    build = describeBuild(await measuredSite(APP_DIST), APP_DIST);
    origin = await startOrigin();
    const target = new URL(origin.url);
    proxy = await serveOnLoopback((req, res) => {
      const headers = { ...req.headers };
      if (swap && headers.cookie) headers.cookie = headers.cookie.replace(/=c\d{3}/, '=c000');
      const forward = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
  });
  after(async () => {
    await proxy?.close();
    await origin?.stop();
  });

  it("passes each visitor's own part, and fails another visitor's in its place", async () => {
    swap = false;
    const fine = await checkPersonal(proxy.url, 'returning', build);
    assert.deepEqual(fine.problems, []);
    assert.equal(fine.valid, true);
    swap = true;
    for (const kind of ['returning', 'new', 'private']) {
      const mixed = await checkPersonal(proxy.url, kind, build);
      assert.equal(mixed.valid, false, kind);
      const other =
        kind === 'private' ? /shows another visitor's session/ : /holds another visitor's part/;
      assert.ok(
        mixed.problems.some((problem) => other.test(problem)),
        `${kind}: ${mixed.problems.join('; ')}`,
      );
    }
  });
});
