// The CDN purge hook (server/revalidation/cdn-purge.ts) on its own, against a CDN stand-in on
// loopback: how items are spelled, batched, bounded and reported. Through the real Varnish:
// test/deploy/varnish.test.mjs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { groupTag } from '../../server/cache/cache-groups.ts';
import { createCdnPurge, MAX_BATCH_TAGS, purgeItems } from '../../server/revalidation/cdn-purge.ts';
import { serveOnLoopback } from '../helpers/loopback-server.mjs';
import { waitFor } from '../helpers/wait.mjs';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** A CDN whose calls are recorded, and held until `release()` while `holding`. */
async function startCdn() {
  const calls = [];
  const held = [];
  const state = { holding: false };
  const cdn = await serveOnLoopback((req, res) => {
    calls.push(req.url);
    const answer = () => res.end('{}');
    if (state.holding) held.push(answer);
    else answer();
  });
  return {
    ...cdn,
    calls,
    hold: () => (state.holding = true),
    release: () => {
      state.holding = false;
      held.splice(0).forEach((answer) => answer());
    },
  };
}

const config = (url) => ({ url, method: 'PURGE', token: undefined, tokenHeader: undefined });

describe('the CDN purge hook', () => {
  it('batches tags into calls of at most MAX_BATCH_TAGS with {groups}, each tag once', async () => {
    const cdn = await startCdn();
    try {
      const purge = createCdnPurge(config(`${cdn.url}/purge/{mode}/{groups}`), quiet);
      const groups = Array.from({ length: 250 }, (_, i) => `g ${i}`);
      const result = await purge({ groups, paths: ['/a,b'], mode: 'hard' });
      assert.deepEqual(result, { ok: true, requests: 3, skipped: 0, failed: [] });
      const tags = cdn.calls.flatMap((url) => url.replace('/purge/hard/', '').split(','));
      assert.ok(cdn.calls.every((url) => url.split(',').length <= MAX_BATCH_TAGS));
      assert.deepEqual(tags.sort(), [...groups.map(groupTag), 'path:%2Fa%2Cb'].sort());
    } finally {
      await cdn.close();
    }
  });

  it('sends a tag waiting for a call once, whichever revalidations named it', async () => {
    const cdn = await startCdn();
    try {
      const purge = createCdnPurge(config(`${cdn.url}/purge/{group}`), quiet);
      cdn.hold();
      // Four calls take the first four groups; the rest wait, and the two revalidations share them.
      const first = purge({ groups: ['a', 'b', 'c', 'd', 'shared'], paths: [], mode: 'soft' });
      const second = purge({ groups: ['shared'], paths: [], mode: 'soft' });
      setTimeout(() => cdn.release(), 100);
      const results = await Promise.all([first, second]);
      assert.ok(results.every((result) => result.ok));
      assert.equal(cdn.calls.filter((url) => url === '/purge/shared').length, 1);
    } finally {
      cdn.release();
      await cdn.close();
    }
  });

  it('bounds the items waiting: past the bound, an item fails at once, said and reported', async () => {
    const cdn = await startCdn();
    const warned = [];
    try {
      const log = { ...quiet, warn: (fields, message) => warned.push({ fields, message }) };
      const purge = createCdnPurge(config(`${cdn.url}/purge/{group}`), log, { maxPending: 10 });
      cdn.hold();
      // Four calls under way (held), then ten items waiting: the eleventh has no room.
      const first = purge({ groups: ['a', 'b', 'c', 'd'], paths: [], mode: 'hard' });
      await waitFor(() => cdn.calls.length === 4, { what: 'four calls under way' });
      const groups = Array.from({ length: 11 }, (_, i) => `g${i}`);
      const second = purge({ groups, paths: [], mode: 'hard' });
      setTimeout(() => cdn.release(), 100);
      assert.equal((await first).ok, true);
      const result = await second;
      assert.equal(result.ok, false);
      assert.deepEqual(result.failed, [
        { item: 'g10', status: undefined, error: 'purge queue full (10 items waiting)' },
      ]);
      assert.equal(warned[0]?.fields.code, 'ORIGIN_CDN_PURGE_FAILED');
      assert.equal(cdn.calls.length, 14);
    } finally {
      cdn.release();
      await cdn.close();
    }
  });

  it('property: a tag holds no separator of a tag list or a path, and says its group or path exactly', () => {
    const char = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
    const name = fc.string({ unit: char, minLength: 1, maxLength: 64 });
    const path = name.map((rest) => `/${rest.replace(/[?#\\]/g, '')}`);
    fc.assert(
      fc.property(
        fc.array(name, { maxLength: 5 }),
        fc.array(path, { maxLength: 5 }),
        (groups, paths) => {
          const { items } = purgeItems('http://cdn/{groups}', { groups, paths });
          for (const item of items) {
            assert.doesNotMatch(item, /[\s,/"%](?![0-9A-F]{2})/, item);
          }
          const groupTags = items.slice(0, groups.length);
          const pathTags = items.slice(groups.length);
          assert.deepEqual(groupTags.map(decodeURIComponent), groups);
          assert.deepEqual(
            pathTags.map((tag) => decodeURIComponent(tag.replace(/^path:/, ''))),
            paths,
          );
          // A path's tag never meets a group's: only it holds a bare colon.
          assert.ok(pathTags.every((tag) => !groupTags.includes(tag)));
          assert.ok(groupTags.every((tag) => !tag.includes(':')));
        },
      ),
      { numRuns: 300 },
    );
  });
});
