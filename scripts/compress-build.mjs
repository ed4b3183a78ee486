// `node scripts/compress-build.mjs [dist]`: writes the build's compressed copies (`.br`, `.gz`)
// next to the files of <dist>/browser that are worth compressing (server/files/compress-build.ts);
// <dist> is the app's build (angular.json's outputPath: scripts/lib/paths.mjs) unless named.
// `npm run build` and scripts/ensure-build.mjs run it after `ng build`.
import { join, resolve } from 'node:path';
import { compressBuild } from '../server/files/compress-build.ts';
import { APP_DIST } from './lib/paths.mjs';

export async function compressDist(dist) {
  const started = performance.now();
  const { written, current, bytes, brotliBytes } = await compressBuild(join(dist, 'browser'));
  if (written > 0) {
    console.log(
      `Compressed copies of ${dist}/browser: ${written} written, ${current} current; ` +
        `${(bytes / 1024).toFixed(0)} kB → ${(brotliBytes / 1024).toFixed(0)} kB with brotli ` +
        `(${((performance.now() - started) / 1000).toFixed(1)} s).`,
    );
  }
}

if (process.argv[1] === import.meta.filename) {
  await compressDist(process.argv[2] ? resolve(process.argv[2]) : APP_DIST);
}
