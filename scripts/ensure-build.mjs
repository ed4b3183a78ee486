// Builds the production bundle when dist/ is missing or older than anything it is built from,
// so `npm run serve:ssr` and the tests never run against a stale build.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { newestMtime } from './newest-mtime.mjs';

const root = join(import.meta.dirname, '..');
const output = join(root, 'dist/server/server.mjs');
const inputs = ['src', 'server', 'public', 'patches', 'angular.json', 'tsconfig.json', 'tsconfig.app.json', 'package-lock.json'];

const built = newestMtime(output);
const changed = Math.max(...inputs.map((input) => newestMtime(join(root, input))));
if (built === 0 || changed > built) {
  console.log(built === 0 ? 'No build in dist/: building…' : 'Sources changed since the last build: building…');
  // The CLI runs on this Node (the project's Node 24 under npm scripts), whatever is first on PATH.
  const ng = join(root, 'node_modules/@angular/cli/bin/ng.js');
  const result = spawnSync(process.execPath, [ng, 'build'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.exit(result.status ?? 1);
  }
}
