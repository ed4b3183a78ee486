// A page that does what real pages do while rendering (test/app/src/app/pages/async-work.ts): an
// untracked zero-delay timer, RxJS timer(0), delay(0) and debounceTime(0), an HttpClient call to the
// origin itself, and timers that fire after the page was sent. With Angular's own scheduling every
// result is in the page, and the late timers neither fail a render nor disturb the process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { at, logLines, request, startOrigin } from '../helpers/origin.mjs';

/** The text of each `data-async` result in the page. */
function results(html) {
  return Object.fromEntries(
    [...html.matchAll(/data-async="([a-z-]+)">([^<]*)</g)].map(([, name, text]) => [
      name,
      text.trim(),
    ]),
  );
}

describe('asynchronous work during a render', () => {
  let origin;
  let exited = false;
  before(async () => {
    origin = await startOrigin();
    origin.exited.then(() => (exited = true));
  });
  after(() => origin?.stop());

  it('keeps the timers, RxJS time operators and HttpClient call in the page', async () => {
    for (const [path, http] of [
      ['/async-work', 'loaded over HTTP'],
      ['/async-work?http=0', 'skipped'],
    ]) {
      const res = await request(origin.url, at(path));
      assert.equal(res.status, 200);
      const found = results(res.text);
      assert.equal(found.timeout, 'done', `${path}: setTimeout(0)`);
      assert.equal(found['rxjs-timer'], 'done', `${path}: timer(0)`);
      assert.equal(found['rxjs-delay'], 'done', `${path}: delay(0)`);
      assert.equal(found['rxjs-debounce'], 'done', `${path}: debounceTime(0)`);
      assert.equal(found.http, http, `${path}: HttpClient`);
    }
  });

  it('survives timers that fire after the page was sent, under concurrent renders', async () => {
    for (let round = 0; round < 5; round++) {
      const pages = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          request(origin.url, at(i % 2 ? '/async-work' : '/async-work?http=0')),
        ),
      );
      for (const page of pages) {
        assert.equal(page.status, 200);
        assert.equal(results(page.text).timeout, 'done');
      }
    }
    // Past every late timer (50 ms) of every render.
    await sleep(300);
    assert.equal(exited, false, 'the origin exited');
    assert.equal((await request(origin.url, '/healthz')).status, 200);
    assert.equal((await request(origin.url, at('/products/5'))).status, 200);
    const errors = logLines(origin).filter((line) => line.level >= 40);
    assert.deepEqual(errors, [], 'warnings or errors were logged');
  });
});
