// End to end, as a user types it: the real Angular CLI (from the registry, as `npx` gives it) makes
// apps from this collection in a temporary folder, installs them, builds them, and the origin in
// each serves a prerendered page, a rendered page and an asset with its headers. Slow (installs):
// minutes, bounded. The npm cache the project's own install filled keeps it inside CI's time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, request, startOrigin } from '../helpers/origin.mjs';

const template = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const INSTALL_MS = 10 * 60_000;
const BUILD_MS = 5 * 60_000;

// The project's own bin folder must not be on PATH: its `ng` would find this workspace and refuse
// `ng new`. npx brings the CLI and Node 24 (Angular 22 refuses the system's Node 20).
const env = {
  ...process.env,
  PATH: process.env.PATH.split(delimiter)
    .filter((dir) => !dir.startsWith(ROOT))
    .join(delimiter),
  NG_CLI_ANALYTICS: 'false',
  GIT_AUTHOR_NAME: 'Scaffold Test',
  GIT_AUTHOR_EMAIL: 'scaffold@example.invalid',
  GIT_COMMITTER_NAME: 'Scaffold Test',
  GIT_COMMITTER_EMAIL: 'scaffold@example.invalid',
};
// An app's own `node --test` is a run of its own: with this file's context it would run nothing.
delete env.NODE_TEST_CONTEXT;
const CLI = [
  'exec',
  '--yes',
  `--package=node@${template.devDependencies.node}`,
  `--package=@angular/cli@${template.devDependencies['@angular/cli']}`,
  '--',
  'ng',
];

/** Runs a command to completion within `timeout`; fails the test with its output otherwise. */
function run(cwd, command, args, timeout) {
  const result = spawnSync(command, args, {
    cwd,
    env,
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} in ${cwd} failed (${result.error?.message ?? `exit ${result.status}`}):\n${output.slice(-4000)}`,
  );
  return output;
}

const ng = (cwd, ...args) => run(cwd, 'npm', [...CLI, ...args], INSTALL_MS);

/** Every file of the app outside node_modules, .git, .angular and dist whose text names the template. */
function leftovers(dir, base = dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (['node_modules', '.git', '.angular', 'dist'].includes(name)) return [];
    if (statSync(path).isDirectory()) return leftovers(path, base);
    return /ssr-origin/i.test(readFileSync(path, 'latin1')) ? [path.slice(base.length + 1)] : [];
  });
}

/** Starts the app's production origin and checks the three kinds of answer it gives. */
async function checkOrigin(app, { prerendered, rendered, renderedStatus = 200, title, base = '' }) {
  const origin = await startOrigin({ dist: join(app, 'dist') });
  try {
    const page = await request(origin.url, prerendered);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'], /^text\/html/);
    assert.match(page.headers.etag, /^"/, 'a strong validator');
    assert.match(page.text, new RegExp(`<title>${title}`));
    const revalidated = await request(origin.url, prerendered, {
      headers: { 'if-none-match': page.headers.etag },
    });
    assert.equal(revalidated.status, 304);

    const render = await request(origin.url, rendered);
    assert.equal(render.status, renderedStatus);
    assert.match(
      render.text,
      /<app-root[^>]*ng-server-context="ssr"/,
      'rendered by Angular for this request',
    );
    assert.match(page.text, /<app-root[^>]*ng-server-context="ssg"/, 'prerendered at build time');

    const script = /<script src="(main-[A-Z0-9]+\.js)"/.exec(page.text)?.[1];
    assert.ok(script, 'the page loads a hashed main bundle');
    const asset = await request(origin.url, `${base}/${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers['content-type'], /javascript/);
    assert.match(asset.headers['cache-control'], /immutable/, 'hashed assets are immutable');
    assert.match(asset.headers.etag, /^"/);

    const hostile = await request(origin.url, prerendered, {
      headers: { host: 'localhost:4000/evil' },
    });
    assert.equal(hostile.status, 400, "the origin's Host checks came along");
  } finally {
    await origin.stop();
  }
}

describe('scaffolding with the real CLI', { timeout: 30 * 60_000 }, () => {
  let work;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'scaffold-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('ng new --collection: the template under a new name, demo and bench included', async () => {
    // A name longer than the template's, as a user's is: what the rename rewrote is formatted.
    ng(work, 'new', 'fjord-outfitters', '--collection', ROOT);
    const app = join(work, 'fjord-outfitters');
    assert.deepEqual(leftovers(app), [], 'no file names the template');
    run(app, 'npm', ['run', 'format:check'], 60_000);
    assert.match(run(app, 'git', ['log', '--oneline'], 10_000), /initial commit/);
    assert.equal(
      run(app, 'git', ['status', '--porcelain'], 10_000).trim(),
      '',
      'the commit includes what the install wrote',
    );
    // The bench's peers install on demand, from the app's own bench/package-lock.json.
    assert.throws(() => statSync(join(app, 'node_modules/bun')), 'no peer in the app install');
    run(app, process.execPath, ['bench/install.mjs'], INSTALL_MS);
    assert.ok(statSync(join(app, 'bench/node_modules/.bin/bun')), "the bench's peers install");
    assert.equal(
      run(app, 'git', ['status', '--porcelain'], 10_000).trim(),
      '',
      'and git ignores them',
    );
    run(app, 'npm', ['run', 'build'], BUILD_MS);
    await checkOrigin(app, { prerendered: '/', rendered: '/products/42', title: '[^<]*' });
  });

  it("ng new --collection --bench=false --locales fr,de: the demo in three locales, its browser tests on the source locale's pages", async () => {
    ng(
      work,
      'new',
      'lean-shop',
      '--collection',
      ROOT,
      '--bench=false',
      '--locales',
      'fr,de',
      '--skip-git',
    );
    const app = join(work, 'lean-shop');
    assert.deepEqual(leftovers(app), []);
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    assert.equal(pkg.devDependencies.bun, undefined);
    assert.throws(() => statSync(join(app, 'node_modules/bun')), 'no bench peer installed');
    assert.throws(() => statSync(join(app, 'bench')));
    run(app, 'npm', ['run', 'build'], BUILD_MS);
    for (const locale of ['en-US', 'fr', 'de']) {
      await checkOrigin(app, {
        prerendered: `/${locale}`,
        rendered: `/${locale}/products/42`,
        title: 'Home · Lean Shop',
        base: `/${locale}`,
      });
    }
    // The demo's tests that name its pages and the one that follows load-paths.json (written
    // under /en-US), on the app's localized build, as its `npm run test:browser` runs them.
    const browserTests = run(
      app,
      'npm',
      [
        'exec',
        '--',
        'node',
        '--test',
        '--test-reporter=tap',
        'test/browser/demo-products.test.mjs',
        'test/browser/pages.test.mjs',
      ],
      BUILD_MS,
    );
    assert.match(browserTests, /^# pass [1-9]\d*$/m);
    assert.match(browserTests, /^# skipped 0$/m, 'none skipped');
    const origin = await startOrigin({ dist: join(app, 'dist') });
    try {
      const root = await request(origin.url, '/', {
        headers: { 'accept-language': 'de-AT, en;q=0.5' },
      });
      assert.equal(root.status, 302);
      assert.equal(root.headers.location, '/de');
      const page = await request(origin.url, '/fr');
      assert.equal(page.headers['content-language'], 'fr');
      assert.match(page.text, /<html lang="fr"/);
    } finally {
      await origin.stop();
    }
  });

  it('ng add on an app made by ng new --ssr, then again: nothing more', async () => {
    // Without install: this registry cannot resolve the stock app's ^22 ranges (see the facts in
    // README, "Which Node runs it"); ng add pins Angular to the patched versions and installs.
    ng(work, 'new', 'stock', '--ssr', '--defaults', '--style=css', '--skip-git', '--skip-install');
    const app = join(work, 'stock');
    // Pages rendered per request, as an app would have them (the stock app prerenders everything).
    const routes = join(app, 'src/app/app.routes.server.ts');
    const stockRoutes = readFileSync(routes, 'utf8');
    writeFileSync(
      routes,
      stockRoutes.replace(
        /\[\s*\{\s*path: '\*\*',\s*renderMode: RenderMode\.Prerender\s*\}\s*\]/,
        "[{ path: '', renderMode: RenderMode.Prerender }, { path: '**', renderMode: RenderMode.Server }]",
      ),
    );
    assert.notEqual(
      readFileSync(routes, 'utf8'),
      stockRoutes,
      "the stock app's routes are as expected",
    );
    const component = readFileSync(join(app, 'src/app/app.ts'), 'utf8');

    const added = ng(app, 'add', ROOT, '--skip-confirmation');
    assert.match(added, /The origin is now stock's SSR entry/);
    assert.equal(
      readFileSync(join(app, 'src/app/app.ts'), 'utf8'),
      component,
      "the user's components are left alone",
    );
    run(app, 'npm', ['run', 'build'], BUILD_MS);
    await checkOrigin(app, { prerendered: '/', rendered: '/some/page', title: 'Stock' });

    const files = ['package.json', 'angular.json', 'tsconfig.app.json', 'src/main.server.ts'];
    const first = files.map((file) => readFileSync(join(app, file), 'utf8'));
    assert.match(ng(app, 'add', ROOT, '--skip-confirmation'), /Nothing to change/);
    assert.deepEqual(
      files.map((file) => readFileSync(join(app, file), 'utf8')),
      first,
    );
  });
});
