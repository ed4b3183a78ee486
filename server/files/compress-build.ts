// The build's compressed copies: `name.br` (brotli at its highest quality) and `name.gz` (gzip -9)
// next to every file worth compressing, written once after `ng build` (`npm run build`,
// scripts/ensure-build.mjs, the image's build stage), so that no request ever waits for them. The
// static index (static-index.ts) holds them beside the file and the writer sends the one a request
// prefers. Copies already newer than their file are left as they are.
import { statSync, unlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { relative, sep } from 'node:path';
import { compressForBuild, compressible, MIN_COMPRESSED_BYTES } from '../http/content-coding.ts';
import { COPIES, listFiles, typeOf } from './static-index.ts';

export interface CompressedBuild {
  /** Copies written now. */
  written: number;
  /** Copies already newer than their file. */
  current: number;
  /** Bytes of the files compressed, and of their brotli copies. */
  bytes: number;
  brotliBytes: number;
}

/** Writes the missing or stale `.br` and `.gz` copies of the files of `browserDir`. */
export async function compressBuild(browserDir: string): Promise<CompressedBuild> {
  const result: CompressedBuild = { written: 0, current: 0, bytes: 0, brotliBytes: 0 };
  const isCopy = new RegExp(`(?:${COPIES.map(({ extension }) => `\\${extension}`).join('|')})$`);
  const files = [...listFiles(browserDir)].filter(
    (path) =>
      !isCopy.test(path) &&
      compressible(typeOf('/' + relative(browserDir, path).split(sep).join('/'))) &&
      statSync(path).size >= MIN_COMPRESSED_BYTES,
  );
  // zlib's thread pool compresses several files at once.
  const queue = [...files];
  const worker = async () => {
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      await compressFile(path, result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, availableParallelism()) }, worker));
  return result;
}

async function compressFile(path: string, result: CompressedBuild): Promise<void> {
  const { mtimeMs } = statSync(path);
  const body = readFileSync(path);
  result.bytes += body.length;
  for (const { coding, extension } of COPIES) {
    const copy = path + extension;
    const copyMtime = statSync(copy, { throwIfNoEntry: false })?.mtimeMs;
    if (copyMtime !== undefined && copyMtime >= mtimeMs) {
      result.current++;
      if (coding === 'br') {
        result.brotliBytes += statSync(copy).size;
      }
      continue;
    }
    const compressed = await compressForBuild(coding, body);
    if (compressed.length >= body.length) {
      // Nothing saved: the file goes out as it is.
      if (copyMtime !== undefined) {
        unlinkSync(copy);
      }
      continue;
    }
    writeFileSync(copy, compressed);
    result.written++;
    if (coding === 'br') {
      result.brotliBytes += compressed.length;
    }
  }
}
