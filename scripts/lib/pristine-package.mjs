// The unpatched twin of a patched package: a copy of node_modules/<package> with its patch from
// patches/ reversed. Tests and bench/patches.mjs compare the two on the same inputs.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.mjs';

/** Returns the directory of the pristine copy of `packageName` (created once per process). */
export function pristinePackage(packageName) {
  const patch = readdirSync(join(ROOT, 'patches')).find((name) =>
    name.startsWith(`${packageName.replace('/', '+')}+`),
  );
  if (!patch) {
    throw new Error(`no patch for ${packageName} in patches/`);
  }
  // Inside the project, so the copy's own imports resolve to the project's node_modules.
  const root = join(ROOT, 'test-results', `pristine-${process.pid}`);
  const dir = join(root, 'node_modules', packageName);
  if (!existsSync(dir)) {
    mkdirSync(join(dir, '..'), { recursive: true });
    cpSync(join(ROOT, 'node_modules', packageName), dir, { recursive: true });
    execFileSync('patch', [
      '--reverse',
      '--strip=1',
      '--silent',
      `--directory=${root}`,
      `--input=${join(ROOT, 'patches', patch)}`,
    ]);
  }
  return dir;
}
