// The asset archive on the deployment's Redis (ASSET_ARCHIVE=redis), through the origin's one
// link (redis/link.ts): `<prefix>:{<prefix>-assets}:file:<path>` a hash (b: body, t: type, build,
// and a field per compressed copy), expiring after ASSET_ARCHIVE_MAX_AGE_S; `…:builds` the builds
// by publication time, `…:bytes` their sizes and `…:paths:<build>` their files, for the bounds.
import type { Coding } from '../http/content-coding.ts';
import type { RedisClient, RedisLink } from '../redis/link.ts';
import {
  type ArchiveBounds,
  type ArchivedFile,
  archivedBytes,
  type AssetArchive,
} from './asset-archive.ts';
import { COPIES, typeOf } from './static-index.ts';

/** Publishing is startup work, not a request: it may wait longer than a lookup. */
const PUBLISH_TIMEOUT_MS = 5000;
/** Bytes of files per Redis transaction while publishing. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Drops every build published before ARGV[2] - ARGV[3] ms, then the oldest builds while the bytes
 * of all exceed ARGV[4], never ARGV[5] (the build publishing). A file goes with the build that
 * published it last: one a newer build published again stays. Returns {builds, bytes}.
 */
const PRUNE_SCRIPT = `
local ns, now, maxAge, maxBytes, current = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local function drop(id)
  for _, path in ipairs(redis.call('SMEMBERS', ns .. ':paths:' .. id)) do
    local key = ns .. ':file:' .. path
    if redis.call('HGET', key, 'build') == id then redis.call('DEL', key) end
  end
  redis.call('DEL', ns .. ':paths:' .. id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - maxAge)) do
  if id ~= current then drop(id) end
end
local total = 0
for _, bytes in ipairs(redis.call('HVALS', KEYS[2])) do total = total + tonumber(bytes) end
while total > maxBytes do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest or oldest == current then break end
  total = total - tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  drop(oldest)
end
return {redis.call('ZCARD', KEYS[1]), total}`;

export class RedisArchive implements AssetArchive {
  readonly #link: RedisLink;
  readonly #namespace: string;
  readonly #bounds: ArchiveBounds;

  constructor(link: RedisLink, keyPrefix: string, bounds: ArchiveBounds) {
    this.#link = link;
    // One hash tag: a Redis Cluster keeps every key of the archive on one shard, as the script needs.
    this.#namespace = `${keyPrefix}:{${keyPrefix}-assets}`;
    this.#bounds = bounds;
  }

  async publish(
    build: string,
    files: readonly ArchivedFile[],
  ): Promise<{ builds: number; bytes: number }> {
    const ns = this.#namespace;
    const { maxAgeMs, maxBytes } = this.#bounds;
    const now = Date.now();
    const published = await this.#call((client) => client.zScore(`${ns}:builds`, build));
    // Published by another process of this build not long ago: its files' expiry is far enough.
    if (published === null || now - published > maxAgeMs / 2) {
      for (const batch of batches(files)) {
        await this.#call((client) => {
          const multi = client.multi();
          for (const file of batch) {
            const key = `${ns}:file:${file.path}`;
            const copies = Object.fromEntries(file.copies.map(([coding, body]) => [coding, body]));
            multi
              .del(key)
              .hSet(key, { b: file.body, t: file.type, build, ...copies })
              .pExpire(key, maxAgeMs)
              .sAdd(`${ns}:paths:${build}`, file.path);
          }
          return multi.pExpire(`${ns}:paths:${build}`, maxAgeMs * 2).exec();
        });
      }
      const bytes = files.reduce((sum, file) => sum + archivedBytes(file), 0);
      await this.#call((client) =>
        client
          .multi()
          .zAdd(`${ns}:builds`, { score: now, value: build })
          .hSet(`${ns}:bytes`, build, String(bytes))
          .exec(),
      );
    }
    const [builds, bytes] = (await this.#call((client) =>
      client.eval(PRUNE_SCRIPT, {
        keys: [`${ns}:builds`, `${ns}:bytes`],
        arguments: [ns, String(now), String(maxAgeMs), String(maxBytes), build],
      }),
    )) as [number, number];
    return { builds, bytes };
  }

  async get(path: string): Promise<ArchivedFile | undefined> {
    const fields = ['b', ...COPIES.map(({ coding }) => coding)];
    const outcome = await this.#link.call('archive.get', (client) =>
      client.hmGet(`${this.#namespace}:file:${path}`, fields),
    );
    if (!outcome.ok || outcome.value[0] === null) {
      return undefined;
    }
    const [body, ...coded] = outcome.value as [Buffer, ...(Buffer | null)[]];
    const copies = COPIES.flatMap(({ coding }, i): [Coding, Buffer][] =>
      coded[i] === null ? [] : [[coding, coded[i]]],
    );
    return { path, type: typeOf(path), body, copies };
  }

  close(): void {
    // The link is the origin's, closed with it.
  }

  /** A call that must succeed for publishing to go on. */
  async #call<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    const outcome = await this.#link.call('archive.publish', command, PUBLISH_TIMEOUT_MS);
    if (!outcome.ok) {
      throw new Error(`Redis: ${outcome.reason}`);
    }
    return outcome.value;
  }
}

/** Files in groups of at most BATCH_BYTES (a file larger than that alone). */
function batches(files: readonly ArchivedFile[]): ArchivedFile[][] {
  const groups: ArchivedFile[][] = [];
  let bytes = Infinity;
  for (const file of files) {
    if (bytes + archivedBytes(file) > BATCH_BYTES) {
      groups.push([]);
      bytes = 0;
    }
    groups.at(-1)!.push(file);
    bytes += archivedBytes(file);
  }
  return groups;
}
