// An entry made before a revalidation and written to Redis after the revalidation's script ran there
// (its process had not heard of it yet, or the write was on its way) is not stored as new: a hard
// revalidation keeps it out, a soft one stores it stale, whichever name reached it (its path, a
// group, its key), whatever those names hold; an entry made after is stored as it is. The real
// server/cache/shared-tier.ts on a real redis-server: what revalidation.test.mjs cannot time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { createClient } from '@redis/client';
import { startRedis } from '../../scripts/lib/redis-server.mjs';
import { RedisLink } from '../../server/redis/link.ts';
import { REVALIDATION_MARKER_MS, SharedTier } from '../../server/cache/shared-tier.ts';
import { waitFor } from '../helpers/wait.mjs';

/** A codec of the least an entry holds: its body in one field. */
const codec = {
  fields: ['b'],
  write: (entry) => ({ fields: { b: entry.body }, bytes: entry.body.length }),
  read: async ([body], revalidated) => ({ ...entryOf(0), body: String(body), revalidated }),
};

const POLICY = { freshMs: 60_000, staleWhileRevalidateMs: 0, staleIfErrorMs: 0 };

function entryOf(storedAt, { groups = [], body = 'old' } = {}) {
  return { groups, policy: POLICY, storedAt, refreshFailed: false, body };
}

/** Keys are `<path> <variant>`: the tier indexes each under its path, as pages are. */
const pathOf = (key) => key.split(' ')[0];

describe('a write that reaches Redis after a revalidation', () => {
  let redis;
  let link;
  let tier;
  let inspector;
  before(async () => {
    redis = await startRedis();
    link = new RedisLink({ url: redis.url, timeoutMs: 2000 }, pino({ level: 'silent' }));
    tier = new SharedTier({
      link,
      namespace: 'test:{writes}',
      codec,
      maxEntryBytes: 1 << 20,
      pathOf,
      log: pino({ level: 'silent' }),
    });
    inspector = createClient({ url: redis.url });
    await inspector.connect();
    await waitFor(() => link.state === 'ready', { what: 'the link to Redis' });
  });
  after(async () => {
    tier?.close();
    await inspector?.close();
    await redis?.stop();
  });

  let n = 0;
  /** A key of its own per case, on a path of its own. */
  const fresh = () => `/case-${n++} v`;

  it('hard, by path: the entry made before is not stored, one made after is', async () => {
    const key = fresh();
    const at = Date.now();
    await tier.revalidate({ paths: [pathOf(key)], groups: [], mode: 'hard', at });
    assert.equal(await tier.put(key, entryOf(at - 5)), 'revalidated');
    assert.deepEqual(await tier.get(key), { found: undefined });
    assert.equal(await tier.put(key, entryOf(at + 5, { body: 'new' })), 'stored');
    const { found } = await tier.get(key);
    assert.equal(found.body, 'new');
    assert.equal(found.revalidated, false);
  });

  it('soft, by group: the entry made before is stored stale', async () => {
    const key = fresh();
    const at = Date.now();
    await tier.revalidate({ paths: [], groups: ['product-7'], mode: 'soft', at });
    assert.equal(await tier.put(key, entryOf(at - 5, { groups: ['product-7'] })), 'stored');
    const { found } = await tier.get(key);
    assert.equal(found.body, 'old');
    assert.equal(found.revalidated, true, 'stored stale');
    // Not the group's: as new.
    const other = fresh();
    await tier.put(other, entryOf(at - 5, { groups: ['product-8'] }));
    assert.equal((await tier.get(other)).found.revalidated, false);
  });

  it('hard, by key (the data a page was made from): not stored', async () => {
    const key = fresh();
    const at = Date.now();
    await tier.revalidate({ paths: [], groups: [], keys: [key], mode: 'hard', at });
    assert.equal(await tier.put(key, entryOf(at - 1)), 'revalidated');
    assert.deepEqual(await tier.get(key), { found: undefined });
  });

  it('a hard revalidation outweighs a later soft one for what was made before both; the marks expire', async () => {
    const key = fresh();
    const at = Date.now();
    await tier.revalidate({ paths: [pathOf(key)], groups: [], mode: 'hard', at });
    await tier.revalidate({ paths: [pathOf(key)], groups: [], mode: 'soft', at: at + 10 });
    assert.equal(await tier.put(key, entryOf(at - 1)), 'revalidated');
    // Made between the two: stale, not refused.
    assert.equal(await tier.put(key, entryOf(at + 5)), 'stored');
    assert.equal((await tier.get(key)).found.revalidated, true);
    const marks = await inspector.keys('test:{writes}:revalidated:*');
    assert.ok(marks.length > 0);
    for (const mark of marks) {
      const ttl = await inspector.pTTL(mark);
      assert.ok(ttl > 0 && ttl <= REVALIDATION_MARKER_MS, `${mark}: ${ttl} ms`);
    }
  });

  it('whatever the names hold, only the names revalidated refuse an entry (property)', async () => {
    const name = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          path: name.map((text) => `/${text.replaceAll(' ', '_')}`),
          groups: fc.uniqueArray(name, { minLength: 1, maxLength: 3 }),
          other: name,
          mode: fc.constantFrom('soft', 'hard'),
          by: fc.constantFrom('path', 'group', 'other'),
        }),
        async ({ path, groups, other, mode, by }) => {
          const key = `${path} v${n++}`;
          const at = Date.now();
          const named = by !== 'other';
          await tier.revalidate({
            paths: by === 'path' ? [path] : [],
            groups: by === 'group' ? [groups[0]] : groups.includes(other) ? [] : [other],
            mode,
            at,
          });
          const outcome = await tier.put(key, entryOf(at - 1, { groups }));
          const { found } = await tier.get(key);
          if (named && mode === 'hard') {
            assert.equal(outcome, 'revalidated');
            assert.equal(found, undefined);
          } else {
            assert.equal(outcome, 'stored');
            assert.equal(found.revalidated, named, `${by} ${mode}`);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
