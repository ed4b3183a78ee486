// Builds what the bench needs, once, and only when stale: the production build (dist/, through the
// project's own scripts/ensure-build.mjs) and the stock server's build (dist-bench/stock/). Then
// proves both serve the same browser build, file for file, since "same app" is the premise.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parsePatchName } from '../../scripts/check-patches.mjs';
import { newestMtime } from '../../scripts/lib/newest-mtime.mjs';
import { APP_DIST } from '../../scripts/lib/paths.mjs';
import { DEFAULT_STOCK_DIST, DIST, ROOT, STOCK_DIST } from './variants.mjs';

/** Everything the stock build is made from (server/ is not: it is not part of that bundle). */
const STOCK_INPUTS = [
  'src',
  'public',
  'patches',
  'bench/variants/stock',
  'angular.json',
  'tsconfig.json',
  'tsconfig.app.json',
  'package-lock.json',
  'bench/package-lock.json',
];

/** @param {string[]} args @param {string} what */
function run(args, what, { quiet }) {
  const started = Date.now();
  const result = spawnSync(process.execPath, args, {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: quiet ? 'pipe' : 'inherit',
  });
  if (result.status !== 0) {
    const output = quiet ? `\n${result.stdout ?? ''}${result.stderr ?? ''}` : '';
    throw new Error(`${what} failed (exit ${result.status ?? result.signal})${output}`);
  }
  return Date.now() - started;
}

function buildStock(log) {
  log('Building the stock server (ng build --configuration bench-stock)…');
  const ms = run(
    [join(ROOT, 'node_modules/@angular/cli/bin/ng.js'), 'build', '--configuration', 'bench-stock'],
    'the bench-stock build',
    { quiet: true },
  );
  log(`  built dist-bench/stock in ${(ms / 1000).toFixed(1)} s`);
}

/**
 * Every file under a folder with its size: what "the same build" compares. The compressed copies
 * the origin's build step writes (`.br`, `.gz`: scripts/compress-build.mjs) are the same files in
 * other codings, not files of the build.
 */
function listing(dir) {
  /** @type {Map<string, number>} */
  const files = new Map();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && !/\.(?:br|gz)$/.test(entry.name)) {
      const path = join(entry.parentPath, entry.name);
      files.set(relative(dir, path), statSync(path).size);
    }
  }
  return files;
}

/** @returns {string[]} the differences, empty when both folders hold the same files with the same sizes */
export function compareBuilds(a, b) {
  const left = listing(a);
  const right = listing(b);
  const differences = [];
  for (const [name, size] of left) {
    if (!right.has(name)) differences.push(`${name} only in ${relative(ROOT, a)}`);
    else if (right.get(name) !== size)
      differences.push(`${name}: ${size} B vs ${right.get(name)} B`);
  }
  for (const name of right.keys())
    if (!left.has(name)) differences.push(`${name} only in ${relative(ROOT, b)}`);
  return differences;
}

/** Whether a build has one app per locale (angular.json's "localize"). @param {string} dist */
const isLocalized = (dist) => !existsSync(join(dist, 'server/main.server.mjs'));

/**
 * Why two builds differ when one is localized and the other is not: `localize` set in the
 * production configuration only, which `bench-stock` (a configuration of its own) does not inherit.
 */
function localizeHint(stockDist) {
  if (isLocalized(DIST) === isLocalized(stockDist)) return '';
  const which = isLocalized(DIST)
    ? 'is localized, the stock build not'
    : 'is not localized, the stock build is';
  return (
    `\n${relative(ROOT, DIST)}/ ${which}: set "localize" in angular.json's build options, which the ` +
    'bench-stock configuration inherits, not in one configuration only.'
  );
}

/**
 * dist/ and dist-bench/stock/ are the bench's to build; BENCH_DIST and BENCH_STOCK_DIST name builds
 * made elsewhere, used as they are.
 * @param {{ stock: boolean, skip: boolean, log: (line: string) => void }} options
 * @returns {{ builtStock: boolean }}
 */
export function ensureBuilds({ stock, skip, log }) {
  if (!skip && DIST === APP_DIST) {
    run(
      [join(ROOT, 'scripts/ensure-build.mjs')],
      'the production build (scripts/ensure-build.mjs)',
      { quiet: false },
    );
  }
  let builtStock = false;
  if (stock) {
    const ours = STOCK_DIST === DEFAULT_STOCK_DIST;
    if (ours && DIST !== APP_DIST) {
      throw new Error(
        `BENCH_DIST names a build other than ${relative(ROOT, APP_DIST)}/, so the stock build the bench makes (of the app in ` +
          'src/) would not be of the same app: set BENCH_STOCK_DIST to the stock server built as that ' +
          'build was (ng build --configuration bench-stock,… --output-path DIR), or leave out stock.',
      );
    }
    const built = newestMtime(join(STOCK_DIST, 'server/server.mjs'));
    const changed = Math.max(...STOCK_INPUTS.map((input) => newestMtime(join(ROOT, input))));
    if (ours && (built === 0 || (!skip && changed > built))) {
      buildStock(log);
      builtStock = true;
    }
    let differences = compareBuilds(join(DIST, 'browser'), join(STOCK_DIST, 'browser'));
    if (ours && differences.length > 0 && !builtStock && !skip) {
      // dist/ may have been rebuilt since (e.g. by the tests): one fresh stock build settles it.
      log('dist-bench/stock/browser differs from dist/browser: rebuilding the stock server.');
      buildStock(log);
      builtStock = true;
      differences = compareBuilds(join(DIST, 'browser'), join(STOCK_DIST, 'browser'));
    }
    if (differences.length > 0) {
      throw new Error(
        `The stock build does not serve the same browser build as ${relative(ROOT, DIST)}/ (names + sizes differ), so the ` +
          `comparison would not be fair:\n  ${differences.slice(0, 12).join('\n  ')}${localizeHint(STOCK_DIST)}`,
      );
    }
  }
  return { builtStock };
}

/**
 * A cheap signature of the builds being served (every file's name, size and mtime): if it changes
 * during the bench, something rebuilt dist/ under the running servers and the numbers that follow
 * would compare different things (and file-based ETags would change mid-run).
 * @param {string[]} dirs
 */
export function buildFingerprint(dirs) {
  const parts = [];
  for (const dir of dirs) {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const stats = statSync(path, { throwIfNoEntry: false });
      parts.push(`${relative(ROOT, path)}:${stats?.size}:${stats?.mtimeMs}`);
    }
  }
  return parts.sort().join('\n');
}

/**
 * The project's patches to node_modules (patch-package, applied on install): they are part of every
 * build and of every variant that loads those packages, so the report must name them.
 * @returns {string[]} package@version of each patch
 */
export function listPatches() {
  try {
    return readdirSync(join(ROOT, 'patches'))
      .map(parsePatchName)
      .filter((patch) => patch !== undefined)
      .map(({ name, version }) => `${name}@${version}`)
      .sort();
  } catch {
    return [];
  }
}
