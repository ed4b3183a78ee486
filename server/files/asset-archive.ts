// The hashed files of recent builds, kept where every replica can read them (ASSET_ARCHIVE): during
// a rolling deploy a page of the previous build (an open tab, a page a CDN still holds) asks the
// new pods for its lazy chunks, which only the old build had; without them the app fails to load
// the route (Angular's ChunkLoadError, angular/angular#44775). Each build publishes its own hashed
// files at startup; a file of an earlier build is then read from the archive, bounded in age and
// size. Two stores: the shared tier the deployment runs (Redis, redis-archive.ts) or a volume
// (directory-archive.ts).
import { readFileSync } from 'node:fs';
import type { Coding } from '../http/content-coding.ts';
import { COPIES, HASHED_NAME, listFiles, typeOf } from './static-index.ts';
import { relative, sep } from 'node:path';

/** A hashed file of a build, with the build's compressed copies of it. */
export interface ArchivedFile {
  path: string;
  type: string;
  body: Buffer;
  copies: [Coding, Buffer][];
}

/** How long and how much the archive keeps (ASSET_ARCHIVE_MAX_AGE_S, ASSET_ARCHIVE_MAX_BYTES). */
export interface ArchiveBounds {
  maxAgeMs: number;
  maxBytes: number;
}

export interface AssetArchive {
  /**
   * Publishes a build's hashed files (its own stay while it is among the recent builds), then
   * drops builds older than the bound or past the byte bound, oldest first, never this one.
   * Returns what the archive holds afterwards.
   */
  publish(
    build: string,
    files: readonly ArchivedFile[],
  ): Promise<{ builds: number; bytes: number }>;
  /** An archived file by its URL path, or undefined (unknown, or the store did not answer). */
  get(path: string): Promise<ArchivedFile | undefined>;
  close(): void;
}

/**
 * A URL path the archive may hold: a hashed bundle at the top of the build, or a hashed file of
 * media/ (as HASHED_NAME), of plain characters only; in a localized build the same under a
 * locale's folder (`/fr/chunk-….js`, `/fr/media/…`). Nothing else is ever looked up or written, so
 * a path can name nothing outside the archive.
 */
const ARCHIVABLE = /^(\/[\w-]+)?(\/(?:media\/)?[\w-][\w.-]*)$/;

export function archivable(path: string): boolean {
  const parts = ARCHIVABLE.exec(path);
  if (parts === null || path.includes('..')) {
    return false;
  }
  const [, folder, inFolder] = parts;
  return HASHED_NAME.test(path) || (folder !== undefined && HASHED_NAME.test(inFolder));
}

/** The build's hashed files, read from its browser folder. */
export function hashedFiles(browserDir: string): ArchivedFile[] {
  const files: ArchivedFile[] = [];
  const copyOf = new RegExp(`(?:${COPIES.map(({ extension }) => `\\${extension}`).join('|')})$`);
  for (const file of listFiles(browserDir)) {
    const path = '/' + relative(browserDir, file).split(sep).join('/');
    if (copyOf.test(path) || !archivable(path)) {
      continue;
    }
    const copies: [Coding, Buffer][] = [];
    for (const { coding, extension } of COPIES) {
      try {
        copies.push([coding, readFileSync(file + extension)]);
      } catch {
        // No copy in this coding (not worth it, or the build has none).
      }
    }
    files.push({ path, type: typeOf(path), body: readFileSync(file), copies });
  }
  return files;
}

/** Bytes a file takes in the archive: its body and its copies. */
export function archivedBytes(file: ArchivedFile): number {
  return file.copies.reduce((sum, [, body]) => sum + body.length, file.body.length);
}
