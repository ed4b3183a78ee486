// What a shared page's render reads of the request that its route does not declare, said in
// production (server/pages/undeclared-reads.ts), for the engine of this run. test/app: `seen/:id`
// declares a currency cookie and an A/B header, and reads the undeclared `theme` cookie through
// requestCookie() and the `X-User` header; `naive-undeclared/:id` is shared and declares nothing,
// and reads the raw cookie header, X-User and every header; `naive/:id` reads the same on purpose
// (`undeclaredReads: 'ignore'`); `products/:id` reads nothing of the request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
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
          const { cookies } = withheldFrom(undefined, { cookie });
          assert.ok(cookies.length <= 9, `${cookies.length} names`);
          for (const listed of cookies) {
            assert.match(listed, /^(?:[A-Za-z0-9_.-]{1,32}|and \d+ more)$/, listed);
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
