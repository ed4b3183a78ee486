// The handler `ng serve` renders through (server.ts `reqHandler`: the origin's Koa chain and pages,
// its Renderer and data cache, on AngularNodeAppEngine): pages render and decide their caching as in
// production; a client that gives up during a render is routine, a debug line, never an error with
// a stack.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DIST, ROOT, request } from '../helpers/origin.mjs';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { waitFor } from '../helpers/wait.mjs';

let child;
let output = '';
let url;

/** Waits (up to 15 s) until the child's output matches. */
function printed(pattern) {
  return waitFor(() => pattern.test(output), {
    what: String(pattern),
    timeoutMs: 15_000,
    everyMs: 50,
    seen: () => output,
  });
}

const lines = () =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

/** An API on loopback for the tests' app's `data/:id` pages, counting what reaches it. */
let api;

before(async () => {
  const asked = [];
  api = await serveOnLoopback((req, res) => {
    asked.push(req.url);
    const body = req.url === '/me' ? { title: 'your own' } : { name: 'catalog', title: 'item' };
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': req.url === '/me' ? 'private, max-age=60' : 'public, max-age=60',
    });
    res.end(JSON.stringify(body));
  });
  api.asked = asked;
  child = spawn(
    process.execPath,
    [
      '--import',
      join(ROOT, 'test/fixtures/slow-renders.mjs'),
      join(ROOT, 'test/fixtures/dev-handler.mjs'),
      DIST,
    ],
    {
      env: {
        ...process.env,
        NG_ALLOWED_HOSTS: '127.0.0.1',
        LOG_LEVEL: 'debug',
        TEST_DATA_API: api.url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await printed(/listening \d+/);
  url = `http://127.0.0.1:${/listening (\d+)/.exec(output)[1]}`;
});
after(async () => {
  child?.kill('SIGKILL');
  await api?.close();
});

describe('dev renders (reqHandler)', () => {
  it('render pages', async () => {
    const res = await request(url, '/products/5');
    assert.equal(res.status, 200);
    assert.match(res.text, /ng-server-context="ssr"/);
  });

  it('render a shared page as production does, warning of each input read that its route does not declare', async () => {
    const from = lines().length;
    const res = await request(url, '/seen/3', {
      headers: { cookie: 'currency=GBP; theme=dark; sid=1', 'x-user': 'alice', 'x-ab-bucket': 'b' },
    });
    assert.equal(res.status, 200);
    assert.match(res.text, /<p class="currency">GBP<\/p>/, 'a declared cookie');
    assert.match(res.text, /<p class="theme">light<\/p>/, 'an undeclared one: the default');
    assert.match(res.text, /<p class="user">nobody<\/p>/, 'an undeclared header: nothing');
    const warned = lines()
      .slice(from)
      .filter((line) => line.level === 40)
      .map(({ route, input }) => `${route} ${input}`);
    // As in production (test/server/undeclared-reads.test.mjs): once per route and input.
    assert.deepEqual(warned.sort(), [
      'seen/:id cookie theme',
      'seen/:id every header',
      'seen/:id header x-user',
    ]);
  });

  it('render what the cache would bypass as production does: from its URL and declared inputs, with its policy; a page without one private', async () => {
    const alice = { cookie: 'sid=alice; currency=USD', 'x-user': 'alice' };
    for (const path of ['/naive/41?utm_source=newsletter', '/naive/41;tab=2']) {
      const res = await request(url, path, { headers: alice });
      assert.equal(res.status, 200, path);
      assert.match(res.text, /Hello, stranger/, `${path}: the session is not the page's`);
      assert.doesNotMatch(res.text, /alice/, path);
      assert.equal(res.headers['cache-control'], 's-maxage=60, stale-while-revalidate=600', path);
    }
    const own = await request(url, '/naive-default/41', { headers: alice });
    assert.match(own.text, /Welcome back, alice!/);
    assert.equal(own.headers['cache-control'], 'private, no-cache');
    const spelled = await request(url, '/naive/41/');
    assert.equal(spelled.status, 308);
    assert.equal(spelled.headers.location, '/naive/41');
  });

  it('render pages made of data as production does: through the data cache, a page of private data private', async () => {
    const before = api.asked.filter((url) => url === '/catalog').length;
    for (const id of [1, 2]) {
      const page = await request(url, `/data/${id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /<p class="catalog">catalog<\/p>/);
    }
    assert.equal(
      api.asked.filter((u) => u === '/catalog').length - before,
      1,
      'the second page took the catalog from the data cache',
    );
    const own = await request(url, '/data-private/1');
    assert.match(own.text, /your own/);
    assert.match(own.headers['cache-control'], /^private/, 'made of private data: private');
  });

  it('log a client that left mid-render at debug level, with no error and no stack', async () => {
    child.kill('SIGWINCH'); // renders stall from now on (test/fixtures/slow-renders.mjs)
    await printed(/slow renders on/);
    const from = lines().length;
    // The client gives up after the request is in the render.
    await new Promise((resolve) => {
      const req = httpRequest(`${url}/products/6`, () => {});
      req.on('error', resolve);
      req.end();
      setTimeout(() => req.destroy(), 300);
    });
    await printed(/client left during a render/);
    const logged = lines().slice(from);
    assert.deepEqual(
      logged.filter((line) => line.level >= 40),
      [],
      'nothing at warn or above',
    );
    const left = logged.find((line) => line.msg === 'client left during a render');
    assert.equal(left.level, 20);
    assert.equal(left.url, '/products/6');
    assert.equal(left.err, undefined, 'no stack');
    child.kill('SIGWINCH');
    await printed(/slow renders off/);
    assert.equal((await request(url, '/products/7')).status, 200, 'and the next page renders');
  });
});
