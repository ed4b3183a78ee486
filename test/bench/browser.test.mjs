// `npm run bench:browser` in smoke mode: one round, this origin (HTTP/2) and the stock server, each
// page loaded once cold in Chromium on the emulated mobile network, and the page with a personal
// part (load-paths.json's `personal`) signed in from the origin, which fills the part. Asserts that
// it ran and measured what it says (every load hydrated, the origin reached over HTTP/2 and
// answering compressed, the part painted as sent or as made in the browser), never a time: speed
// is the bench's output.
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
    // The signed-in pages from the origin alone: the stock server fills no part.
    const signedIn = json.personal ? 2 : 0;
    assert.equal(json.loads.length, (json.pages.length - signedIn) * 2 + signedIn);
    assert.match(run.stdout, /stock: no part showing .* not measured signed in/);
    for (const load of json.loads) {
      assert.ok(load.bytes > 0 && load.fcp > 0 && load.lcp > 0, JSON.stringify(load));
      assert.ok(load.hydrated >= load.fcp, JSON.stringify(load));
    }
    assert.ok(readdirSync(out).some((file) => file.endsWith('.md')));
    assert.match(run.stdout, /hydrated/);
  });

  it("measures a signed-in visitor's part as the origin sent it and as the browser made it", (t) => {
    if (!json.personal) return t.skip('load-paths.json names no page with a personal part');
    const [filled, inBrowser] = [json.personal.filled, json.personal.inBrowser].map((page) =>
      json.loads.find((load) => load.page === page && load.variant === 'origin'),
    );
    assert.deepEqual(json.personal.variants, ['origin']);
    // Structure, not speed: the part the origin sent entered the document with the HTML, before
    // the page was hydrated; the part made in the browser entered it after, made by the app; both
    // were painted. Not their paint times, against each other or against hydration: on a busy
    // machine (a clean-clone CI run) the part can run out of its time at the origin, which then
    // sends the placeholder, and the app makes the part after hydration: the report counts such a
    // load and leaves it out of its figures.
    assert.equal(filled.partAfterHydration, !filled.partInHtml, JSON.stringify(filled));
    assert.equal(inBrowser.partInHtml, false, JSON.stringify(inBrowser));
    assert.equal(inBrowser.partAfterHydration, true, JSON.stringify(inBrowser));
    assert.ok(filled.part > 0 && inBrowser.part > 0, JSON.stringify({ filled, inBrowser }));
    assert.match(run.stdout, /The personal part, signed in/);
    assert.match(
      run.stdout,
      filled.partInHtml
        ? /origin +part +[\d,]+ +LCP +[\d,]+ +part − LCP .*target ≤ LCP: (met|missed)/
        : /origin +part +– .*not measured; .*1 load\(s\) got the placeholder \(the part out of time\)/,
    );
  });

  it('reaches the origin over HTTP/2, and gets its pages compressed', () => {
    for (const page of json.pages.filter(
      (name) => name !== json.personal?.filled && name !== json.personal?.inBrowser,
    )) {
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
