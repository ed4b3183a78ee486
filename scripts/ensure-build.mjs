// Builds a production bundle when it is missing or older than anything it is built from, so
// `npm run serve:ssr` and the tests never run against a stale build, then writes the compressed
// copies of its files that are missing or older than their file (scripts/compress-build.mjs).
// `node scripts/ensure-build.mjs` builds the app (src/ → dist/, or where angular.json's outputPath
// puts it: scripts/lib/paths.mjs); `node scripts/ensure-build.mjs
// test-app` builds the origin's test app (test/app/ → dist-test/), `test-app-i18n` the same app in
// its three locales (dist-test-i18n/). APP_BUILD_CONFIGURATION names the angular.json configuration
// the app is built with instead of its default (`bench-i18n`: the demo in three locales, into dist/
// all the same), e.g. to run the browser tests on a localized build of the demo.
//
// Several may start at once (replicas started together, test suites run side by side): one builds,
// the others wait for its build and then use it. A build deletes and rewrites its output, so a
// build is only trusted, fresh or not, once no other process is writing it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compressDist } from './compress-build.mjs';
import { takeLock } from './lib/lock.mjs';
import { newestMtime } from './lib/newest-mtime.mjs';
import { appOutputPath } from './lib/paths.mjs';

const root = join(import.meta.dirname, '..');
const appOutput = appOutputPath(root);
const shared = ['server', 'patches', 'angular.json', 'tsconfig.json', 'package-lock.json'];
const appConfiguration = process.env['APP_BUILD_CONFIGURATION'];
/**
 * In the template, src/app/'s helpers re-export their one source in the tests' app
 * (schematics/parts.json appFiles): a change there is a change of the app too. An app made from
 * the template, or given the origin, has its own copies in src/ and no schematics/.
 */
function appFileSources() {
  const manifest = join(root, 'schematics/parts.json');
  if (!existsSync(manifest)) return [];
  const { appFilesFrom, parts } = JSON.parse(readFileSync(manifest, 'utf8'));
  return Object.values(parts).flatMap((part) =>
    Object.keys(part.appFiles ?? {}).map((path) => join(appFilesFrom, path)),
  );
}
const projects = {
  app: {
    output: appOutput,
    inputs: ['src', 'public', 'tsconfig.app.json', ...appFileSources(), ...shared],
    args: appConfiguration ? ['--configuration', appConfiguration, '--output-path', appOutput] : [],
    // Asked by name: a build that does not say it was made so (one by hand) is not trusted.
    recorded: appConfiguration !== undefined,
  },
  'test-app': { output: 'dist-test', inputs: ['test/app', ...shared], args: ['test-app'] },
  'test-app-i18n': {
    output: 'dist-test-i18n',
    inputs: ['test/app', ...shared],
    args: ['test-app', '--configuration', 'localized'],
  },
};
/**
 * What a build by this script was asked for, kept in its output (a file the origin never serves):
 * a fresh build asked otherwise is built again. `ng build` empties the output, so a build made by
 * hand has none: trusted, fresh, as it is, unless the project is asked for a configuration by name.
 */
const RECORD = 'ensure-build.json';

/** Whether the build in `output` may have been made with other arguments than `project.args`. */
function builtOtherwise({ output, args, recorded = false }) {
  const file = join(root, output, RECORD);
  if (!existsSync(file)) return recorded;
  return JSON.stringify(JSON.parse(readFileSync(file, 'utf8')).args) !== JSON.stringify(args);
}

/** How long a start waits for another process's build before it gives up. */
const WAIT_MS = 15 * 60_000;

/** @returns {Promise<number>} the exit code */
async function main(name = 'app') {
  const project = projects[name];
  if (!project) {
    console.error(`Unknown project "${name}": use one of ${Object.keys(projects).join(', ')}.`);
    return 2;
  }
  // In node_modules: ignored by git and Docker wherever this script is, and local to one install.
  const release = await takeLock(
    join(root, 'node_modules/.cache/ensure-build', `${project.output}.lock`),
    {
      timeoutMs: WAIT_MS,
      what: `waiting to build ${project.output}/`,
      onWait: (pid) =>
        console.log(`Process ${pid} is building ${project.output}/: waiting for it to finish…`),
    },
  );
  try {
    const built = newestMtime(join(root, project.output, 'server/server.mjs'));
    const changed = Math.max(...project.inputs.map((input) => newestMtime(join(root, input))));
    const otherwise = built !== 0 && builtOtherwise(project);
    if (built !== 0 && changed <= built && !otherwise) {
      await compressDist(join(root, project.output));
      return 0;
    }
    console.log(
      built === 0
        ? `No build in ${project.output}/: building…`
        : otherwise
          ? `${project.output}/ was built with other arguments than ${JSON.stringify(project.args)}: building…`
          : `Sources changed since the last build of ${project.output}/: building…`,
    );
    // The CLI runs on this Node (the project's Node 24 under npm scripts), whatever is first on PATH.
    const ng = join(root, 'node_modules/@angular/cli/bin/ng.js');
    const result = spawnSync(process.execPath, [ng, 'build', ...project.args], {
      cwd: root,
      stdio: 'inherit',
    });
    if (result.status !== 0) return result.status ?? 1;
    writeFileSync(
      join(root, project.output, RECORD),
      `${JSON.stringify({ args: project.args })}\n`,
    );
    await compressDist(join(root, project.output));
    return 0;
  } finally {
    release();
  }
}
try {
  process.exitCode = await main(process.argv[2]);
} catch (error) {
  console.error(/** @type {Error} */ (error).message);
  process.exitCode = 1;
}
