// What a shared page's render reads of the request that its route does not declare, said in
// production (server/pages/undeclared-reads.ts), for the engine of this run. test/app: `seen/:id`
// declares a currency cookie and an A/B header, and reads the undeclared `theme` cookie through
// requestCookie() and the `X-User` header; `naive-undeclared/:id` is shared and declares nothing,
// and reads the raw cookie header, X-User and every header; `naive/:id` reads the same on purpose
// (`undeclaredReads: 'ignore'`); `products/:id` reads nothing of the request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_NAMED_PER_ROUTE } from '../../server/pages/undeclared-reads.ts';
import { withheldFrom } from '../../server/request/render-request.ts';
import { at, logLines, request, startOrigin } from '../helpers/origin.mjs';

const VISITOR = { cookie: 'sid=alice; _ga=GA1.2.3; currency=USD; theme=dark', 'x-user': 'alice' };
const METRICS_LINE = /Metrics on (http:\/\/[^\s"]+)\/metrics/;

/** The warnings about undeclared reads logged so far: `route input` → its line. */
function warnings(origin) {
  return new Map(
    logLines(origin)
      .filter((line) => line.level === 40 && line.input !== undefined)
      .map((line) => [`${line.route} ${line.input}`, line]),
  );
}

describe('reads of undeclared request inputs', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('are said once per route and input, naming what the visitor sent and the render did not see', async () => {
    for (let i = 0; i < 3; i++) {
      const page = await request(origin.url, at(`/seen/${20 + i}`), { headers: VISITOR });
      assert.equal(page.status, 200);
      assert.match(page.text, /<p class="theme">light<\/p>/, 'the default: the cookie is withheld');
    }
    const said = warnings(origin);
    // The page writes out everything its REQUEST holds: every header, too.
    assert.deepEqual([...said.keys()].sort(), [
      'seen/:id cookie theme',
      'seen/:id every header',
      'seen/:id header x-user',
    ]);
    const theme = said.get('seen/:id cookie theme');
    assert.deepEqual(theme.withheld, ['sid', '_ga', 'theme']);
    assert.match(theme.msg, /^\/seen\/:id read cookie theme, which its route does not declare/);
    assert.match(theme.msg, /withheld: sid, _ga, theme — declare it with renderInputs\(\)/);
    assert.deepEqual(said.get('seen/:id header x-user').withheld, ['x-user']);
    const counted = JSON.parse((await request(origin.url, '/healthz')).text).renders
      .undeclaredReads;
    assert.equal(counted['seen/:id cookie theme'], 3, 'every read counted');
    assert.equal(counted['seen/:id header x-user'], 3);
  });

  it('on a shared route that declares nothing: the raw cookie header, a header, every header', async () => {
    const page = await request(origin.url, at('/naive-undeclared/7'), { headers: VISITOR });
    assert.equal(page.status, 200);
    assert.match(page.text, /Hello, stranger/);
    const said = warnings(origin);
    for (const input of ['cookie header', 'header x-user', 'every header']) {
      assert.ok(said.has(`naive-undeclared/:id ${input}`), `${input}: ${[...said.keys()]}`);
    }
    // A render for the cache (a miss) names the withheld cookies of the request that asked.
    assert.deepEqual(said.get('naive-undeclared/:id cookie header').withheld, [
      'sid',
      '_ga',
      'currency',
      'theme',
    ]);
  });

  it('are not said for a route that reads on purpose, nor for one that reads nothing', async () => {
    const before = logLines(origin).length;
    await request(origin.url, at('/naive/7'), { headers: VISITOR });
    await request(origin.url, at('/products/7'), { headers: VISITOR });
    await request(origin.url, at('/private-seen'), { headers: VISITOR });
    const added = logLines(origin)
      .slice(before)
      .filter((line) => line.level >= 40);
    assert.deepEqual(added, []);
  });

  it('are counted in the metrics by route and the input the code named', async () => {
    const url = METRICS_LINE.exec(origin.stdout())?.[1];
    assert.ok(url, origin.stdout());
    const text = (await request(url, '/metrics')).text;
    assert.match(
      text,
      /origin_render_undeclared_reads_total\{route="seen\/:id",input="cookie theme"\} [1-9]/,
    );
    assert.match(
      text,
      /origin_render_undeclared_reads_total\{route="naive-undeclared\/:id",input="every header"\} [1-9]/,
    );
  });
});

describe('each withheld cookie is named once per route, whoever the first visitor was', () => {
  const ROUTE = 'naive-undeclared/:id';
  let origin;
  let page = 100;
  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.stop();
  });

  /** A render of the route (a new page each time: a cached one renders nothing) for `cookie`. */
  async function visit(cookie) {
    const res = await request(origin.url, at(`/naive-undeclared/${page++}`), {
      headers: cookie === undefined ? {} : { cookie },
    });
    assert.equal(res.status, 200);
  }
  const linesOf = () =>
    logLines(origin).filter((line) => line.level === 40 && line.route === ROUTE);
  /** Every cookie name the route's lines have said, in order. */
  const named = () => linesOf().flatMap((line) => line.withheld ?? []);

  it('an anonymous visitor, then sid, then sid and cart: a line naming sid, then one naming cart', async () => {
    const seen = [];
    for (const cookie of [undefined, 'sid=alice', 'sid=bob; cart=3', 'cart=4; sid=carol']) {
      await visit(cookie);
      seen.push(named());
    }
    assert.deepEqual(seen, [[], ['sid'], ['sid', 'cart'], ['sid', 'cart']]);
    const lines = linesOf();
    assert.ok(
      lines.some((line) => / \(this visitor sent none\) — /.test(line.msg)),
      'the first, anonymous read is said',
    );
    const sid = lines.find((line) => line.withheld?.includes('sid'));
    assert.equal(sid.input, 'cookie header');
    assert.match(
      sid.msg,
      /read cookie header, which its route does not declare: .*; withheld: sid — /,
    );
    assert.match(lines.find((line) => line.withheld?.includes('cart')).msg, /; withheld: cart — /);
  });

  it(`property: under a flood of made-up cookie names, no name is said twice, at most ${MAX_NAMED_PER_ROUTE} per route, then once that later ones are not`, async () => {
    const name = fc.stringMatching(/^[A-Za-z_][\w.-]{0,15}$/);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), async (names) => {
        // Each visitor's own names (the page number in each), so that the flood passes the bound.
        await visit(names.map((one) => `${one}${page}=1`).join('; '));
        const said = named();
        assert.equal(new Set(said).size, said.length, `a name said twice: ${said}`);
        assert.ok(said.length <= MAX_NAMED_PER_ROUTE, `${said.length} names said`);
      }),
      { numRuns: 60 },
    );
    assert.equal(named().length, MAX_NAMED_PER_ROUTE, 'the flood filled the bound');
    const full = linesOf().filter((line) => /later ones are not\)/.test(line.msg));
    assert.equal(full.length, 1, 'said once');
    assert.match(
      full[0].msg,
      new RegExp(`more than ${MAX_NAMED_PER_ROUTE} cookies named for this route`),
    );
    // The counts keep the inputs the code named, never a name a visitor chose.
    const counted = JSON.parse((await request(origin.url, '/healthz')).text).renders
      .undeclaredReads;
    assert.deepEqual(
      Object.keys(counted)
        .filter((series) => series.startsWith(ROUTE))
        .sort(),
      [`${ROUTE} cookie header`, `${ROUTE} every header`, `${ROUTE} header x-user`],
    );
  });
});

describe('RENDER_INPUTS_STRICT', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { RENDER_INPUTS_STRICT: 'true' } });
  });
  after(async () => {
    await origin?.stop();
  });

  it('fails the render of a page that reads an undeclared input, and no other', async () => {
    const failed = await request(origin.url, at('/seen/5'), { headers: VISITOR });
    assert.equal(failed.status, 500);
    assert.equal(failed.headers['cache-control'], 'no-store');
    assert.doesNotMatch(failed.text, /alice|Error|at /, 'no stack, nothing of the visitor');
    const logged = logLines(origin).find((line) => line.level >= 50);
    assert.match(JSON.stringify(logged), /RENDER_INPUTS_STRICT/);
    for (const path of ['/products/5', '/naive/5', '/private-seen']) {
      const res = await request(origin.url, at(path), { headers: VISITOR });
      assert.equal(res.status, 200, path);
    }
  });
});

describe('withheldFrom: what a warning lists of what a visitor sent', () => {
  it('property: cookie names sanitized and capped, whatever a visitor names them', () => {
    const name = fc.string({ minLength: 1, maxLength: 80 }).filter((s) => !/[;=]/.test(s));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, fc.string({ maxLength: 8 })), { maxLength: 20 }),
        (pairs) => {
          const cookie = pairs.map(([n, v]) => `${n}=${v.replace(/;/g, '')}`).join('; ');
          const { cookies, moreCookies } = withheldFrom(undefined, { cookie });
          assert.ok(cookies.length <= 8, `${cookies.length} names`);
          assert.ok(moreCookies === 0 || cookies.length === 8, `${moreCookies} more`);
          for (const listed of cookies) {
            assert.match(listed, /^[A-Za-z0-9_.-]{1,32}$/, listed);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves out what the route declares', () => {
    const inputs = {
      inputs: [{ kind: 'cookie', name: 'currency', values: new Set(['EUR']), default: 'EUR' }],
      vary: 'Cookie',
      undeclaredReads: 'warn',
    };
    const withheld = withheldFrom(inputs, { cookie: 'currency=USD; sid=1', 'x-user': 'a' });
    assert.deepEqual(withheld.cookies, ['sid']);
    assert.ok(withheld.headers.has('x-user'));
  });
});
