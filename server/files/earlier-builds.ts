import type { Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { answer, type Answer, respond } from '../http/answer.ts';
import { withEncodings } from '../http/encodings.ts';
import { strongEtag } from '../http/entity-tag.ts';
import { archivable, type ArchivedFile, type AssetArchive, hashedFiles } from './asset-archive.ts';
import { HASHED_ASSET_CACHE } from './static-index.ts';
import { report } from '../errors.ts';

/** Answers of earlier builds' files kept in this process: a few builds' chunks, not the archive. */
const REMEMBERED_BYTES = 16 * 1024 * 1024;
/**
 * A publication that failed (Redis still connecting or down, the volume not mounted yet) is tried
 * again after 250 ms, then twice as long each time up to a minute.
 */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 60_000;

/**
 * filesOfEarlierBuilds: a hashed file this build does not have (its index and disk came first) is
 * looked for among the files recent builds published (asset-archive.ts), and answered as this
 * build answers its own: immutable, with its strong ETag and its compressed copies. Anything the
 * archive does not hold goes on, to the plain 404 of a missing file, never to a page.
 */
export function filesOfEarlierBuilds(archive: AssetArchive): Middleware {
  const answers = new LRUCache<string, Answer>({
    maxSize: REMEMBERED_BYTES,
    sizeCalculation: (found) =>
      [found, ...(found.encodings?.answers ?? [])].reduce((sum, { body }) => sum + body.length, 1),
  });
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !archivable(ctx.path)) {
      await next();
      return;
    }
    let found = answers.get(ctx.path);
    if (found === undefined) {
      const file = await archive.get(ctx.path);
      if (file === undefined) {
        await next();
        return;
      }
      found = archivedAnswer(file);
      answers.set(ctx.path, found);
    }
    respond(ctx, found);
  };
}

/** A file of an earlier build, answered as the static index answers this build's own. */
function archivedAnswer(file: ArchivedFile): Answer {
  const validators = { etag: strongEtag(file.body) };
  const headers = [
    'Content-Type',
    file.type,
    'Cache-Control',
    HASHED_ASSET_CACHE,
    'ETag',
    validators.etag,
    'Accept-Ranges',
    'none',
  ];
  const identity = answer(200, headers, file.body, {
    validators,
    compress: file.copies.length > 0,
  });
  return file.copies.length === 0 ? identity : withEncodings(identity, file.copies);
}

/**
 * Publishes this build's hashed files in the background, logs what the archive holds, and tries
 * again later if the store did not answer: serving never waits for it.
 */
export function publishInBackground(
  archive: AssetArchive,
  build: string,
  browserDir: string,
  log: Logger,
): void {
  const files = hashedFiles(browserDir);
  const attempt = (retryMs: number) => {
    archive.publish(build, files).then(
      ({ builds, bytes }) =>
        log.info(
          { build, files: files.length, builds, bytes },
          'asset archive: this build’s hashed files published',
        ),
      (error: unknown) => {
        // Redis connects in the background: the first attempts at startup often find it connecting.
        if (retryMs >= MAX_RETRY_MS) {
          report(log, 'ORIGIN_ASSET_ARCHIVE_FAILED', { err: error, build, retryMs });
        } else {
          log.debug({ err: error, build, retryMs }, 'asset archive: publishing failed, retrying');
        }
        setTimeout(() => attempt(Math.min(retryMs * 2, MAX_RETRY_MS)), retryMs).unref();
      },
    );
  };
  attempt(FIRST_RETRY_MS);
}
