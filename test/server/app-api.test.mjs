// The app's own API (its server bundle's `api` export, here test/app/src/api.ts): the origin answers
// `/api/…` with it before the Host guard (renders call it by an internal address), as the API made
// the answer, never rendering for it; an app without one is served as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { health, logLines, request, startOrigin } from '../helpers/origin.mjs';

/** The origin's own line saying where it listens, and where renders reach the app's API. */
const listening = (origin) =>
  logLines(origin).find((line) => line.msg.startsWith('Origin listening'));

describe('the app API on /api/…', () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin?.stop());

  it('answers before the Host guard, whatever the Host, under a fixed origin', async () => {
    for (const host of ['evil.example', '10.0.0.7:4000', 'localhost']) {
      const res = await request(origin.url, '/api/echo?q=1', {
        headers: { host, 'x-test': 'passed on' },
      });
      assert.equal(res.status, 200, host);
      const echo = JSON.parse(res.text);
      assert.equal(
        echo.url,
        'http://localhost/api/echo?q=1',
        'the API never sees a Host as its origin',
      );
      assert.equal(echo.test, 'passed on');
      assert.equal(res.headers['cache-control'], 'no-store', "the API's own headers");
      assert.equal(res.headers.etag, '"echo"');
    }
    // A page with such a Host is the guard's to refuse, as ever.
    assert.equal(
      (await request(origin.url, '/products/1', { headers: { host: 'evil.example' } })).status,
      400,
    );
  });

  it('never renders for it, whatever the API answers', async () => {
    const before = (await health(origin)).renders.started;
    const asked = await Promise.all(
      ['/api/echo', '/api/cookies', '/api/not-modified', '/api/throws', '/api/shadowed.json'].map(
        (path) => request(origin.url, path),
      ),
    );
    assert.deepEqual(
      asked.map((res) => res.status),
      [200, 200, 304, 500, 200],
    );
    assert.equal((await health(origin)).renders.started, before);
  });

  it('writes the answer as the API made it: cookies apart, 304 and HEAD without a body, a body passed in', async () => {
    const cookies = await request(origin.url, '/api/cookies');
    assert.deepEqual(cookies.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    const notModified = await request(origin.url, '/api/not-modified');
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    assert.equal(notModified.headers.etag, '"v1"');
    // An API that answers HEAD as it answers GET, with no Content-Length of its own.
    const get = await request(origin.url, '/api/shadowed.json');
    const head = await request(origin.url, '/api/shadowed.json', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    const posted = await request(origin.url, '/api/echo', {
      method: 'POST',
      body: 'x'.repeat(70_000),
    });
    assert.equal(JSON.parse(posted.text).bodyBytes, 70_000);
  });

  it('an API that throws gets a 500 as JSON, logged once, and the next request is answered', async () => {
    const res = await request(origin.url, '/api/throws');
    assert.equal(res.status, 500);
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.deepEqual(JSON.parse(res.text), { error: 'the API failed to answer' });
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(logLines(origin).some((line) => line.msg === 'the app api failed'));
    assert.equal((await request(origin.url, '/api/echo')).status, 200);
  });

  it('a path the API leaves goes on down the chain: the Host guard, then the pages', async () => {
    assert.equal(
      (await request(origin.url, '/api/not-mine', { headers: { host: 'evil.example' } })).status,
      400,
    );
    const page = await request(origin.url, '/api/not-mine');
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type'], /^text\/html/);
  });

  it('answers its paths itself, never the fast path: not even a file of the build there', async () => {
    // Twice: the second request's Host is known, which is when the fast path would answer.
    for (let i = 0; i < 2; i++) {
      const res = await request(origin.url, '/api/shadowed.json');
      assert.deepEqual(JSON.parse(res.text), { from: 'the api' });
    }
  });

  it("says where renders reach it when API_URL does not: the origin's own address", () => {
    assert.equal(listening(origin).api, `${origin.url}/api`);
  });
});

describe('an app without an API', () => {
  let origin;
  let configured;
  before(async () => {
    [origin, configured] = await Promise.all([
      startOrigin({ env: { TEST_APP_API: 'off' } }),
      startOrigin({ env: { API_URL: 'http://api.internal:8080/api' } }),
    ]);
  });
  after(() => Promise.all([origin?.stop(), configured?.stop()]));

  it('is served as before: /api/… is a path of its pages, behind the Host guard, its files from memory', async () => {
    assert.equal(
      (await request(origin.url, '/api/echo', { headers: { host: 'evil.example' } })).status,
      400,
    );
    const page = await request(origin.url, '/api/echo');
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type'], /^text\/html/);
    for (let i = 0; i < 2; i++) {
      const file = await request(origin.url, '/api/shadowed.json');
      assert.deepEqual(JSON.parse(file.text), { from: 'the file' });
    }
    assert.ok((await health(origin)).answeredBeforeKoa > 0, 'the file came from the fast path');
  });

  it('sets no API_URL, and one that is set is left as it is', () => {
    assert.equal(listening(origin).api, undefined);
    assert.equal(listening(configured).api, undefined);
  });
});
