// The app in src/ built in its three locales (angular.json's `bench-i18n`: en-US, fr, de), for the
// origin and for the stock server, under dist-bench/: what `npm run bench:locales` compares with the
// plain build, and what the bench's test of a localized app measures. Built only when older than
// their sources.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compressDist } from '../../scripts/compress-build.mjs';
import { newestMtime } from '../../scripts/lib/newest-mtime.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';

export const I18N_DIST = join(ROOT, 'dist-bench/i18n');
export const STOCK_I18N_DIST = join(ROOT, 'dist-bench/stock-i18n');
const I18N_INPUTS = ['src', 'public', 'server', 'patches', 'bench/locale', 'angular.json'];
const STOCK_I18N_INPUTS = [
  'src',
  'public',
  'patches',
  'bench/locale',
  'bench/variants/stock',
  'angular.json',
];

/**
 * Whether angular.json can build the app in src/ in three locales (`bench-i18n`): an app localized
 * already (`ng new --locales`) has no such configuration, its own build being the localized one.
 */
export function hasLocalizedConfiguration() {
  const { projects } = JSON.parse(readFileSync(join(ROOT, 'angular.json'), 'utf8'));
  return Object.values(projects).some(
    (project) =>
      project.sourceRoot === 'src' &&
      project.architect?.build?.configurations?.['bench-i18n'] !== undefined,
  );
}

/** Builds the app localized into `output` with `configurations` when older than its inputs. */
function ensureLocalizedBuild(output, configurations, inputs) {
  const built = newestMtime(join(output, 'server/server.mjs'));
  const changed = Math.max(...inputs.map((input) => newestMtime(join(ROOT, input))));
  if (built !== 0 && changed <= built) return;
  console.log(`Building the localized app (${configurations} → ${relative(ROOT, output)}/)…`);
  const ng = join(ROOT, 'node_modules/@angular/cli/bin/ng.js');
  const result = spawnSync(
    process.execPath,
    [ng, 'build', '--configuration', configurations, '--output-path', relative(ROOT, output)],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error(`the ${configurations} build failed`);
}

/** Both localized builds, current, the origin's with its compressed copies (as ensure-build writes them). */
export async function ensureLocalizedBuilds() {
  ensureLocalizedBuild(I18N_DIST, 'production,bench-i18n', I18N_INPUTS);
  ensureLocalizedBuild(STOCK_I18N_DIST, 'bench-stock,bench-i18n', STOCK_I18N_INPUTS);
  await compressDist(I18N_DIST);
}
