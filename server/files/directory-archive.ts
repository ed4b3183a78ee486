// The asset archive on a volume every replica mounts (ASSET_ARCHIVE=/path): `files/<path>` (and its
// `.br`, `.gz` copies) and `builds/<build>.json` (when it was published, its files, their bytes).
// Every write goes to a temporary name first and is renamed into place: a reader never sees half a
// file, and replicas publishing the same build at once write the same bytes.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Coding } from '../http/content-coding.ts';
import {
  type ArchiveBounds,
  archivable,
  type ArchivedFile,
  archivedBytes,
  type AssetArchive,
} from './asset-archive.ts';
import { COPIES, typeOf } from './static-index.ts';

/** A build's record: what pruning reads. */
interface BuildRecord {
  build: string;
  publishedAt: number;
  bytes: number;
  paths: string[];
}

export class DirectoryArchive implements AssetArchive {
  readonly #files: string;
  readonly #builds: string;
  readonly #bounds: ArchiveBounds;

  constructor(dir: string, bounds: ArchiveBounds) {
    this.#files = join(dir, 'files');
    this.#builds = join(dir, 'builds');
    this.#bounds = bounds;
  }

  async publish(
    build: string,
    files: readonly ArchivedFile[],
  ): Promise<{ builds: number; bytes: number }> {
    const now = Date.now();
    let records = await this.#records();
    const own = records.find((record) => record.build === build);
    // Published by another replica of this build not long ago: nothing to write again.
    if (own === undefined || now - own.publishedAt > this.#bounds.maxAgeMs / 2) {
      for (const file of files) {
        await this.#write(file);
      }
      const record: BuildRecord = {
        build,
        publishedAt: now,
        bytes: files.reduce((sum, file) => sum + archivedBytes(file), 0),
        paths: files.map((file) => file.path),
      };
      await writeAtomically(join(this.#builds, `${build}.json`), JSON.stringify(record));
      records = [...records.filter((entry) => entry.build !== build), record];
    }
    return this.#prune(records, build, now);
  }

  async get(path: string): Promise<ArchivedFile | undefined> {
    const body = await readOrUndefined(this.#file(path));
    if (body === undefined) {
      return undefined;
    }
    const copies: [Coding, Buffer][] = [];
    for (const { coding, extension } of COPIES) {
      const copy = await readOrUndefined(this.#file(path) + extension);
      if (copy !== undefined) {
        copies.push([coding, copy]);
      }
    }
    return { path, type: typeOf(path), body, copies };
  }

  close(): void {
    // Nothing held open.
  }

  /** The path is archivable (asset-archive.ts): plain characters, no `..`, under files/. */
  #file(path: string): string {
    return join(this.#files, path);
  }

  async #write(file: ArchivedFile): Promise<void> {
    const target = this.#file(file.path);
    // A hashed name holds one content: a file already there of the same size is this one.
    if ((await stat(target).catch(() => undefined))?.size !== file.body.length) {
      await writeAtomically(target, file.body);
    }
    for (const { coding, extension } of COPIES) {
      const copy = file.copies.find(([name]) => name === coding)?.[1];
      if (copy !== undefined) {
        await writeAtomically(target + extension, copy);
      }
    }
  }

  /** Every readable build record, oldest first. */
  async #records(): Promise<BuildRecord[]> {
    const names = await readdir(this.#builds).catch(() => [] as string[]);
    const records: BuildRecord[] = [];
    for (const name of names.filter((entry) => entry.endsWith('.json'))) {
      try {
        const record = JSON.parse(await readFile(join(this.#builds, name), 'utf8')) as BuildRecord;
        if (
          Number.isFinite(record.publishedAt) &&
          Number.isFinite(record.bytes) &&
          `${record.build}.json` === name &&
          Array.isArray(record.paths) &&
          record.paths.every((path) => typeof path === 'string' && archivable(path))
        ) {
          records.push(record);
        }
      } catch {
        // Being written by another replica, or not ours: left alone.
      }
    }
    return records.sort((a, b) => a.publishedAt - b.publishedAt);
  }

  /**
   * Drops builds past the age bound, then the oldest while the bytes of all exceed the size bound,
   * never `current`; a file goes once no build kept still names it.
   */
  async #prune(
    records: BuildRecord[],
    current: string,
    now: number,
  ): Promise<{ builds: number; bytes: number }> {
    const { maxAgeMs, maxBytes } = this.#bounds;
    const kept = records.filter(
      (record) => record.build === current || now - record.publishedAt <= maxAgeMs,
    );
    let bytes = kept.reduce((sum, record) => sum + record.bytes, 0);
    while (bytes > maxBytes && kept.length > 1 && kept[0].build !== current) {
      bytes -= kept.shift()!.bytes;
    }
    const named = new Set(kept.flatMap((record) => record.paths));
    for (const record of records.filter((entry) => !kept.includes(entry))) {
      for (const path of record.paths.filter((entry) => !named.has(entry))) {
        for (const suffix of ['', ...COPIES.map(({ extension }) => extension)]) {
          await rm(this.#file(path) + suffix, { force: true });
        }
      }
      await rm(join(this.#builds, `${record.build}.json`), { force: true });
    }
    return { builds: kept.length, bytes };
  }
}

async function writeAtomically(path: string, data: Buffer | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, data);
  await rename(temporary, path);
}

async function readOrUndefined(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch {
    return undefined;
  }
}
