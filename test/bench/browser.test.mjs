// `npm run bench:browser` in smoke mode: one round, this origin (HTTP/2) and the stock server, each
// page loaded once cold in Chromium on the emulated mobile network. Asserts that it ran and
// measured what it says (every load hydrated, the origin reached over HTTP/2 and answering
// compressed), never a time: speed is the bench's output.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runBench } from '../helpers/bench.mjs';

describe('npm run bench:browser (smoke mode)', { timeout: 180_000 }, () => {
  let out;
  let run;
  let json;
  before(async () => {
    out = mkdtempSync(join(tmpdir(), 'bench-browser-'));
    run = await runBench(['--quick', '--variants', 'origin,stock', '--out', out], 170_000, {
      script: 'bench/browser.mjs',
    });
    const name = readdirSync(out).find((file) => file.endsWith('.json'));
    json = name && JSON.parse(readFileSync(join(out, name), 'utf8'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('loads every page of every variant once, each hydrated, and writes the table', () => {
    assert.equal(run.code, 0, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
    assert.ok(json, `no JSON in ${out}`);
    assert.equal(json.loads.length, json.pages.length * 2);
    for (const load of json.loads) {
      assert.ok(load.bytes > 0 && load.fcp > 0 && load.lcp > 0, JSON.stringify(load));
      assert.ok(load.hydrated >= load.fcp, JSON.stringify(load));
    }
    assert.ok(readdirSync(out).some((file) => file.endsWith('.md')));
    assert.match(run.stdout, /hydrated/);
  });

  it('reaches the origin over HTTP/2, and gets its pages compressed', () => {
    for (const page of json.pages) {
      const [origin, stock] = ['origin', 'stock'].map((variant) =>
        json.loads.find((load) => load.page === page && load.variant === variant),
      );
      assert.equal(origin.protocol, 'h2');
      assert.equal(stock.protocol, 'http/1.1');
      // Structure, not speed: the stock server compresses nothing.
      assert.ok(
        origin.bytes < stock.bytes / 2,
        `${page}: ${origin.bytes} B against ${stock.bytes} B`,
      );
    }
  });
});
