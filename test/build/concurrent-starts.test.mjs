// Replicas started together on a tree whose build is stale: `npm run serve:ssr` builds first, and
// builds into one dist/ racing each other crashed the starts (ENOENT on a file another build had
// just deleted). One must build, the others wait for that build, and every one then serves. Run in
// a scratch copy of the project (the tests' app and the origin, node_modules linked), so the real
// builds other suites use are never touched, with the real Angular build of the tests' app.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startChild } from '../../scripts/lib/child-process.mjs';
import { DIST, ROOT, request } from '../helpers/origin.mjs';

const STARTS = 3;
const LISTENING = /listening on http:\/\/[^:]+:(\d+)/;
const BUILD_MS = 5 * 60_000;
/** What the test app's build reads (scripts/ensure-build.mjs), and the scripts that build it. */
const FILES = [
  'test/app',
  'server',
  'patches',
  'angular.json',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'scripts/ensure-build.mjs',
  'scripts/compress-build.mjs',
  'scripts/lib',
];

/** The project's serve:ssr, as written in package.json, for the tests' app instead of src/. */
function serveScript() {
  const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['serve:ssr'];
  const forTestApp = script
    .replace('scripts/ensure-build.mjs', 'scripts/ensure-build.mjs test-app')
    .replace('dist/server/', 'dist-test/server/');
  assert.notEqual(forTestApp, script);
  assert.match(forTestApp, /ensure-build\.mjs test-app && .*dist-test\/server\/server\.mjs/);
  return forTestApp;
}

describe(
  `${STARTS} origins started at once on a stale build`,
  { timeout: BUILD_MS + 60_000 },
  () => {
    const project = join(ROOT, 'test-results', `concurrent-starts-${process.pid}`);
    const starts = [];

    before(async () => {
      mkdirSync(project, { recursive: true });
      for (const path of FILES) cpSync(join(ROOT, path), join(project, path), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
      // A build that is there but older than a source: stale, as after editing a page.
      cpSync(DIST, join(project, 'dist-test'), { recursive: true });
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(join(project, 'dist-test/server/server.mjs'), hourAgo, hourAgo);

      const script = serveScript();
      for (let i = 0; i < STARTS; i++) {
        starts.push(
          startChild(['sh', '-c', script], {
            cwd: project,
            env: {
              ...process.env,
              NG_ALLOWED_HOSTS: '',
              PORT: '0',
              HOST: '127.0.0.1',
              // Stopped at the end: no window to wait out (scripts/lib/origin-process.mjs).
              DRAIN_WINDOW_MS: '0',
            },
          }),
        );
      }
      await Promise.all(
        starts.map((start) => start.waitFor(LISTENING, { timeoutMs: BUILD_MS })),
      ).catch((error) => {
        throw new Error(
          `${error.message}\n${starts.map((start, i) => `── start ${i}:\n${start.output().slice(-3000)}`).join('\n')}`,
        );
      });
    });

    after(async () => {
      await Promise.all(starts.map((start) => start.stop({ graceMs: 10_000 })));
      rmSync(project, { recursive: true, force: true });
    });

    it('builds once: one start builds, the others wait for it', () => {
      const building = starts.filter((start) => /building…/.test(start.output()));
      const waiting = starts.filter((start) =>
        /is building dist-test\/: waiting/.test(start.output()),
      );
      assert.equal(building.length, 1, starts.map((start) => start.output()).join('\n──\n'));
      assert.equal(waiting.length, STARTS - 1);
    });

    it('every one serves the new build: a prerendered page, a rendered one, a file', async () => {
      for (const start of starts) {
        const url = `http://127.0.0.1:${LISTENING.exec(start.output())[1]}`;
        for (const path of ['/', '/products/5', '/favicon.ico']) {
          const res = await request(url, path);
          assert.equal(res.status, 200, `${url}${path}`);
        }
        assert.equal(start.exit(), undefined, 'still running');
      }
    });
  },
);
