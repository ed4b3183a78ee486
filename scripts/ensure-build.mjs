// Builds a production bundle when it is missing or older than anything it is built from, so
// `npm run serve:ssr` and the tests never run against a stale build, then writes the compressed
// copies of its files that are missing or older than their file (scripts/compress-build.mjs).
// `node scripts/ensure-build.mjs` builds the app (src/ → dist/); `node scripts/ensure-build.mjs
// test-app` builds the origin's test app (test/app/ → dist-test/).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { compressDist } from './compress-build.mjs';
import { newestMtime } from './lib/newest-mtime.mjs';

const root = join(import.meta.dirname, '..');
const shared = ['server', 'patches', 'angular.json', 'tsconfig.json', 'package-lock.json'];
const projects = {
  app: { output: 'dist', inputs: ['src', 'public', 'tsconfig.app.json', ...shared], args: [] },
  'test-app': { output: 'dist-test', inputs: ['test/app', ...shared], args: ['test-app'] },
};

const name = process.argv[2] ?? 'app';
const project = projects[name];
if (!project) {
  console.error(`Unknown project "${name}": use one of ${Object.keys(projects).join(', ')}.`);
  process.exit(2);
}
const built = newestMtime(join(root, project.output, 'server/server.mjs'));
const changed = Math.max(...project.inputs.map((input) => newestMtime(join(root, input))));
if (built === 0 || changed > built) {
  console.log(
    built === 0
      ? `No build in ${project.output}/: building…`
      : `Sources changed since the last build of ${project.output}/: building…`,
  );
  // The CLI runs on this Node (the project's Node 24 under npm scripts), whatever is first on PATH.
  const ng = join(root, 'node_modules/@angular/cli/bin/ng.js');
  const result = spawnSync(process.execPath, [ng, 'build', ...project.args], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    process.exit(result.status ?? 1);
  }
}
await compressDist(join(root, project.output));
