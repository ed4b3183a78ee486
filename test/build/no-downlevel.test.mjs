// The origin is the build's ssr.entry: bundled apart from the app and never downleveled. Zone.js in
// the polyfills makes the builder turn async/await into `__async` generator helpers in the app's
// bundles; this proves the origin and the Koa stack it loads keep native async even then.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DIST, ROOT, request, startOrigin } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

const ZONE_DIST = join(ROOT, 'dist-test-zone');
// esbuild's helper is `__async(this, arguments, function* () {…})` at every former async function;
// minification renames the helper but keeps the shape of its calls.
const DOWNLEVEL_HELPER = /\b__async\b|\(\s*this\s*,\s*(?:null|arguments)\s*,\s*function\s*\*/;
const KOA_STACK = [
  'koa',
  '@koa/router',
  '@koa/etag',
  'koa-static',
  'koa-send',
  'koa-conditional-get',
  'koa-compose',
];

function build(configuration) {
  const result = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/@angular/cli/bin/ng.js'),
      'build',
      'test-app',
      '--configuration',
      configuration,
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  assert.equal(
    result.status,
    0,
    `ng build --configuration ${configuration} failed:\n${result.stdout}\n${result.stderr}`,
  );
}

/** Starts a build's origin, loads a prerendered and a rendered page, returns every file it loaded. */
async function filesLoadedBy(dist) {
  const list = join(tmpdir(), `loaded-${process.pid}-${Date.now()}.json`);
  const origin = await startOrigin({
    dist,
    nodeArgs: ['--import', join(import.meta.dirname, 'record-loads.mjs')],
    env: { RECORD_LOADS_TO: list },
  });
  try {
    for (const path of ['/', '/products/5', '/favicon.ico', '/nope']) {
      const res = await request(origin.url, path);
      assert.ok([200, 404].includes(res.status), `${path}: ${res.status}`);
    }
    process.kill(origin.pid, 'SIGUSR2');
    await waitFor(() => existsSync(list), {
      what: 'list of loaded files (record-loads.mjs, on SIGUSR2)',
      timeoutMs: 5_000,
      everyMs: 100,
    });
    return JSON.parse(readFileSync(list, 'utf8'));
  } finally {
    await origin.stop();
    rmSync(list, { force: true });
  }
}

const inKoaStack = (file) =>
  KOA_STACK.some((name) =>
    file.includes(`${sep}node_modules${sep}${name.replace('/', sep)}${sep}`),
  );

describe('no downleveling in the origin', () => {
  before(() => build('zone'), { timeout: 300_000 });
  after(() => rmSync(ZONE_DIST, { recursive: true, force: true }));

  it('the zone.js build really downlevels the app (so the checks below can fail)', () => {
    assert.ok(
      DOWNLEVEL_HELPER.test(readFileSync(join(ZONE_DIST, 'server/main.server.mjs'), 'utf8')),
    );
  });

  for (const [name, dist] of [
    ['zoneless build', DIST],
    ['zone.js build', ZONE_DIST],
  ]) {
    it(`${name}: server.mjs keeps native async and does not bundle Koa`, () => {
      const bundle = readFileSync(join(dist, 'server/server.mjs'), 'utf8');
      assert.ok(!DOWNLEVEL_HELPER.test(bundle), 'server.mjs contains __async');
      assert.ok(/\basync\b/.test(bundle), 'server.mjs has no native async at all');
      for (const pkg of ['koa', '@koa/router', '@koa/etag', 'koa-static', 'koa-conditional-get']) {
        assert.ok(
          bundle.includes(`from"${pkg}"`) || bundle.includes(`from "${pkg}"`),
          `${pkg} is bundled, not imported`,
        );
      }
    });

    it(`${name}: every package file the running origin loads (the Koa stack and the rest) keeps native async`, async () => {
      const files = await filesLoadedBy(dist);
      const koaFiles = files.filter(inKoaStack);
      for (const pkg of [
        'koa',
        '@koa/router',
        '@koa/etag',
        'koa-static',
        'koa-send',
        'koa-conditional-get',
      ]) {
        assert.ok(
          koaFiles.some((file) => file.includes(`${sep}${pkg.replace('/', sep)}${sep}`)),
          `${pkg} was not loaded`,
        );
      }
      for (const file of files.filter((path) => path.includes(`${sep}node_modules${sep}`))) {
        assert.ok(!DOWNLEVEL_HELPER.test(readFileSync(file, 'utf8')), `${file} contains __async`);
      }
      const serverFiles = files.filter((file) => file.startsWith(join(dist, 'server') + sep));
      assert.ok(serverFiles.includes(join(dist, 'server/server.mjs')));
    });
  }
});
