// The collection's schematics run in Angular's own SchematicTestRunner against this repository's
// files (ng-new) and against a real `ng new --ssr` app made by @schematics/angular (ng-add).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { SchematicTestRunner } from '@angular-devkit/schematics/testing/index.js';
import { ROOT } from '../helpers/origin.mjs';
import { OPTIONAL_SUITES, SUITES } from '../../scripts/run-tests.mjs';
import parts from '../../schematics/parts.cjs';
import { vclForInputs } from '../../deploy/varnish/inputs-vcl.mjs';

const collection = join(ROOT, 'schematics/collection.json');
const runner = () => new SchematicTestRunner('ssr-origin', collection);
const json = (tree, path) => JSON.parse(tree.readContent(path));
// The template's package name in any case, and its brand as the UI shows it.
const TEMPLATE_NAMES = /ssr-origin|SSR Origin/;
const TEMPLATE_NAME_ANY_CASE = /ssr-origin/i;

async function scaffold(options) {
  const testRunner = runner();
  const tree = await testRunner.runSchematic('ng-new', { name: 'acme-shop', ...options });
  return {
    tree,
    tasks: testRunner.tasks.map((task) => task.name),
    options: testRunner.tasks.map((task) => task.options),
  };
}

/** The README and docs/ of the app in the tree, which the schematic edits alike. */
function docs(tree) {
  const found = tree.files.filter((path) =>
    /^\/acme-shop\/(?:README\.md|docs\/.+\.md)$/.test(path),
  );
  assert.ok(found.includes('/acme-shop/README.md'));
  return found;
}

/** Every text file of the tree that still names the template. */
function leftovers(tree) {
  return tree.files.filter(
    (path) =>
      !/\.(ico|png|jpe?g|webp|woff2?)$/.test(path) &&
      (TEMPLATE_NAMES.test(tree.readContent(path)) ||
        TEMPLATE_NAME_ANY_CASE.test(tree.readContent(path))),
  );
}

describe('ng-new', () => {
  it('creates the template under the new name, with the demo and the bench', async () => {
    const { tree, tasks, options } = await scaffold({});
    for (const path of [
      'package.json',
      'angular.json',
      'server/server.ts',
      'src/app/pages/product.ts',
      'bench/run.mjs',
      'test/browser/pages.test.mjs',
      '.gitignore',
      '.ci/run',
    ]) {
      assert.ok(tree.exists(`/acme-shop/${path}`), `${path} is created`);
    }
    assert.deepEqual(leftovers(tree), [], 'no file names the template');
    const pkg = json(tree, '/acme-shop/package.json');
    assert.equal(pkg.name, 'acme-shop');
    assert.equal(pkg.schematics, undefined, 'the new app is not a schematics collection');
    assert.equal(pkg['ng-add'], undefined);
    assert.equal(
      pkg.dependencies['@angular-devkit/schematics'],
      undefined,
      'nor does it need the schematics engine',
    );
    // npm test runs the suites whose test:* scripts exist (scripts/run-tests.mjs).
    assert.equal(pkg.scripts.test, 'node scripts/run-tests.mjs');
    assert.equal(pkg.scripts['test:schematics'], undefined);
    assert.ok(
      pkg.scripts['test:bench'] && SUITES.includes('bench'),
      'npm test runs the bench tests',
    );
    // The collection formats with Prettier, so the template lists it among its dependencies (a
    // tarball install brings those only); in the app it is a tool again, out of production installs.
    assert.equal(pkg.dependencies.prettier, undefined, 'Prettier is not a production dependency');
    assert.ok(pkg.devDependencies.prettier, 'but a dev dependency, for format and test:lint');
    const lock = json(tree, '/acme-shop/package-lock.json');
    assert.equal(lock.name, 'acme-shop');
    assert.equal(lock.packages[''].devDependencies.prettier, pkg.devDependencies.prettier);
    assert.equal(lock.packages['node_modules/prettier'].dev, true);
    const workspace = json(tree, '/acme-shop/angular.json');
    assert.deepEqual(
      Object.keys(workspace.projects).filter((name) => !name.startsWith('test')),
      ['acme-shop'],
    );
    assert.equal(
      workspace.projects['acme-shop'].architect.serve.configurations.production.buildTarget,
      'acme-shop:build:production',
    );
    assert.match(tree.readContent('/acme-shop/src/index.html'), /<title>Acme Shop<\/title>/);
    assert.match(tree.readContent('/acme-shop/src/app/app.ts'), /Acme Shop/);
    assert.ok(
      !tree.files.some((path) => path.includes('/schematics/')),
      'the collection itself is not copied',
    );
    assert.doesNotMatch(tree.readContent('/acme-shop/.gitignore'), /schematics/);
    assert.match(tree.readContent('/acme-shop/.gitignore'), /\/node_modules/);
    assert.deepEqual(
      tasks,
      ['node-package', 'repo-init'],
      'installs, then commits, as ng new does',
    );
    assert.equal(options[0].allowScripts, true, 'the install applies the patches (postinstall)');
  });

  it('npm test skips, as absent from the app, every suite the scaffold may remove, and no other', async () => {
    const template = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    const { tree } = await scaffold({ bench: false, demo: false });
    const app = json(tree, '/acme-shop/package.json').scripts;
    const removed = SUITES.filter(
      (suite) => template[`test:${suite}`] !== undefined && app[`test:${suite}`] === undefined,
    );
    assert.deepEqual(removed.sort(), Object.keys(OPTIONAL_SUITES).sort());
  });

  it("copies the repository's own files, not a second copy", async () => {
    const { tree } = await scaffold({});
    for (const path of [
      'server/server.ts',
      'server/origin.ts',
      'src/app/pages/product.ts',
      'patches/koa+3.3.0.patch',
    ]) {
      assert.equal(
        tree.readContent(`/acme-shop/${path}`),
        readFileSync(join(ROOT, path), 'utf8'),
        path,
      );
    }
  });

  it("writes the helpers every app gets in its own src/app/ from their one source, the tests' app's", async () => {
    const helpers = parts.appFilesOf(Object.keys(parts.PARTS)).map(([path]) => path);
    assert.deepEqual(helpers.sort(), [
      'src/app/cache-groups.ts',
      'src/app/personal-part.server.ts',
      'src/app/personal-part.ts',
      'src/app/render-inputs.ts',
    ]);
    for (const demo of [true, false]) {
      const { tree } = await scaffold({ demo });
      for (const path of helpers) {
        const source = parts.appFileSource(path);
        assert.equal(source, `test/app/${path}`);
        assert.equal(
          tree.readContent(`/acme-shop/${path}`),
          readFileSync(join(ROOT, source), 'utf8'),
          path,
        );
        // The template's own file holds no second copy: it re-exports the source.
        const own = readFileSync(join(ROOT, path), 'utf8');
        const reexport = `export * from '../../${source.replace(/\.ts$/, '')}';`;
        assert.deepEqual(
          own.split('\n').filter((line) => line !== '' && !line.startsWith('//')),
          [reexport],
          path,
        );
      }
    }
  });

  it('makes the same app from the packed tarball as from the checkout', async () => {
    const { scaffoldFiles } = await import('../../schematics/template.cjs');
    const dir = mkdtempSync(join(tmpdir(), 'pack-'));
    try {
      // npm pack runs prepack/postpack (the lockfile travels in schematics/); then unpack it.
      execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 60_000,
      });
      execFileSync('sh', ['-c', 'tar -xzf *.tgz'], { cwd: dir, timeout: 60_000 });
      // As npm leaves it when it installs the package (npx -p, ng add): .gitignore renamed .npmignore.
      renameSync(join(dir, 'package/.gitignore'), join(dir, 'package/.npmignore'));
      for (const options of [
        { name: 'acme-shop' },
        { name: 'acme-shop', demo: false, bench: false },
      ]) {
        const fromCheckout = scaffoldFiles(options);
        const fromTarball = scaffoldFiles(options, join(dir, 'package'));
        assert.deepEqual(
          [...fromTarball.keys()].sort(),
          [...fromCheckout.keys()].sort(),
          'the same files',
        );
        for (const [path, content] of fromCheckout)
          assert.ok(content.equals(fromTarball.get(path)), `${path} has the same bytes`);
        assert.ok(
          fromTarball.has('package-lock.json') && fromTarball.has('.gitignore'),
          'including what npm leaves out by default',
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--bench=false leaves out bench/, its scripts and its peers', async () => {
    const { tree } = await scaffold({ bench: false });
    assert.ok(
      !tree.files.some(
        (path) => path.startsWith('/acme-shop/bench/') || path.startsWith('/acme-shop/test/bench/'),
      ),
    );
    assert.ok(!tree.exists('/acme-shop/bench/package.json'), "nor the peers' own package.json");
    const pkg = json(tree, '/acme-shop/package.json');
    for (const peer of [
      'bun',
      'elysia',
      '@elysiajs/static',
      'express',
      'fastify',
      '@fastify/static',
    ]) {
      assert.equal(pkg.devDependencies[peer], undefined, `${peer} is not a dev dependency`);
    }
    for (const script of ['bench', 'bench:patches', 'test:bench', 'serve:ssr:bun'])
      assert.equal(pkg.scripts[script], undefined, script);
    assert.ok('bench' in OPTIONAL_SUITES, 'npm test skips the suite, not fails');
    assert.ok(pkg.devDependencies.autocannon, "the origin's load tests keep autocannon");
    const workspace = json(tree, '/acme-shop/angular.json');
    assert.equal(
      workspace.projects['acme-shop'].architect.build.configurations['bench-stock'],
      undefined,
    );
    assert.doesNotMatch(tree.readContent('/acme-shop/tsconfig.app.json'), /bench/);
    assert.ok(!tree.exists('/acme-shop/docs/benchmark.md'), "nor the benchmark's doc");
    for (const doc of docs(tree))
      assert.doesNotMatch(
        tree.readContent(doc),
        /section:bench/,
        `${doc} loses its bench sections`,
      );
    assert.deepEqual(leftovers(tree), []);
  });

  it('--demo=false gives one home page and the not-found page', async () => {
    const { tree } = await scaffold({ demo: false });
    const app = tree.files.filter((path) => path.startsWith('/acme-shop/src/app/')).sort();
    assert.deepEqual(app, [
      '/acme-shop/src/app/app.config.server.ts',
      '/acme-shop/src/app/app.config.ts',
      '/acme-shop/src/app/app.routes.server.ts',
      '/acme-shop/src/app/app.routes.ts',
      '/acme-shop/src/app/app.spec.ts',
      '/acme-shop/src/app/app.ts',
      // Every app can declare cache groups (docs/revalidation.md), demo or not.
      '/acme-shop/src/app/cache-groups.spec.ts',
      '/acme-shop/src/app/cache-groups.ts',
      // Every app reloads once on a lazy chunk a deploy took away (docs/your-app.md).
      '/acme-shop/src/app/chunk-error.spec.ts',
      '/acme-shop/src/app/chunk-error.ts',
      '/acme-shop/src/app/page-title.spec.ts',
      '/acme-shop/src/app/page-title.ts',
      '/acme-shop/src/app/pages/home.ts',
      '/acme-shop/src/app/pages/not-found.ts',
      // Every app can have personal parts on its shared pages (docs/personal-parts.md).
      '/acme-shop/src/app/personal-part.server.spec.ts',
      '/acme-shop/src/app/personal-part.server.ts',
      '/acme-shop/src/app/personal-part.spec.ts',
      '/acme-shop/src/app/personal-part.ts',
      '/acme-shop/src/app/render-inputs.ts',
    ]);
    assert.ok(
      !tree.exists('/acme-shop/test/browser/pages.test.mjs'),
      "the demo's browser tests go with it",
    );
    assert.ok(!tree.exists('/acme-shop/public/async-work.json'), "and the demo's data");
    assert.deepEqual(
      tree.files.filter((path) => path.startsWith('/acme-shop/src/api/')),
      [],
      "and the demo's API",
    );
    // The server bundle exports no API and maps no API URL: the demo's, gone with it.
    const mainServer = tree.readContent('/acme-shop/src/main.server.ts');
    assert.doesNotMatch(mainServer, /\bapi\b/);
    assert.match(mainServer, /export \{ serverRoutes \}/, 'the exports every app has stay');
    assert.doesNotMatch(tree.readContent('/acme-shop/src/app/app.config.server.ts'), /api/i);
    const pkg = json(tree, '/acme-shop/package.json');
    assert.equal(pkg.scripts['test:browser'], undefined);
    assert.ok('browser' in OPTIONAL_SUITES, 'npm test skips the suite, not fails');
    assert.match(tree.readContent('/acme-shop/src/app/pages/home.ts'), /Acme Shop/);
    assert.ok(
      tree.exists('/acme-shop/server/server.ts') &&
        tree.exists('/acme-shop/test/server/origin.test.mjs'),
      'the origin and its tests stay',
    );
    assert.ok(tree.exists('/acme-shop/test/app/src/main.server.ts'), "with the tests' own app");
    assert.equal(
      json(tree, '/acme-shop/load-paths.json').rendered.status,
      404,
      "load-paths.json names the minimal app's pages",
    );
    assert.equal(
      tree.readContent('/acme-shop/src/app/pages/not-found.ts'),
      readFileSync(join(ROOT, 'src/app/pages/not-found.ts'), 'utf8'),
      "the template's own not-found page",
    );
    assert.match(
      tree.readContent('/acme-shop/README.md'),
      /^# Acme Shop/,
      "the app's README, not the minimal app's note",
    );
    for (const doc of docs(tree))
      assert.doesNotMatch(tree.readContent(doc), /section:demo/, `${doc} loses its demo sections`);
    assert.ok(!tree.exists('/acme-shop/src/README.md'), "nor the demo's");
    assert.equal(
      tree.readContent('/acme-shop/deploy/varnish/inputs.vcl'),
      vclForInputs([]),
      "the CDN keys the minimal app's pages by URL alone, as npm run varnish:inputs says of its routes",
    );
    assert.deepEqual(leftovers(tree), []);
  });

  for (const [demo, bench] of [
    [true, true],
    [false, false],
  ]) {
    it(`--locales fr,de${demo ? '' : ' --demo=false --bench=false'}: built in three locales, load-paths.json under the source locale`, async () => {
      const { tree } = await scaffold({ demo, bench, locales: 'fr,de' });
      const project = json(tree, '/acme-shop/angular.json').projects['acme-shop'];
      assert.equal(project.architect.build.options.localize, true);
      assert.deepEqual(project.i18n, {
        sourceLocale: 'en-US',
        locales: {
          fr: { translation: 'src/locale/messages.fr.xlf' },
          de: { translation: 'src/locale/messages.de.xlf' },
        },
      });
      for (const locale of ['fr', 'de'])
        assert.ok(tree.exists(`/acme-shop/src/locale/messages.${locale}.xlf`), locale);
      const template = JSON.parse(
        readFileSync(
          join(ROOT, demo ? 'load-paths.json' : 'schematics/ng-new/minimal/load-paths.json'),
          'utf8',
        ),
      );
      const paths = json(tree, '/acme-shop/load-paths.json');
      for (const key of ['prerendered', 'clientOnly', 'notFound'])
        if (template[key] !== undefined)
          assert.equal(paths[key], `/en-US${template[key] === '/' ? '' : template[key]}`, key);
      for (const key of ['rendered', 'data', 'personal'])
        assert.equal(paths[key]?.path, template[key] && `/en-US${template[key].path}`, key);
      assert.equal(
        paths.personal?.private.path,
        template.personal && `/en-US${template.personal.private.path}`,
        'personal.private',
      );
      // The demo's browser tests come along: they ask the build for its source locale's pages.
      assert.equal(tree.exists('/acme-shop/test/browser/demo-products.test.mjs'), demo);
      assert.ok(tree.exists('/acme-shop/test/helpers/site.mjs'));
      assert.equal('test:browser' in json(tree, '/acme-shop/package.json').scripts, demo);
      assert.deepEqual(leftovers(tree), []);
    });
  }

  it('--locales keeps the bench, which measures the source locale: no second localized build', async () => {
    const { tree } = await scaffold({ locales: 'fr,de' });
    assert.ok(tree.exists('/acme-shop/bench/run.mjs'));
    const build = json(tree, '/acme-shop/angular.json').projects['acme-shop'].architect.build;
    assert.equal(
      build.configurations['bench-i18n'],
      undefined,
      'bench:locales says why it cannot run',
    );
    assert.ok(
      build.configurations['bench-stock'],
      "the stock server's build, localized as the app",
    );
  });

  it('--skip-install and --skip-git schedule nothing; --directory places it', async () => {
    const { tree, tasks } = await scaffold({
      skipInstall: true,
      skipGit: true,
      directory: 'apps/shop',
    });
    assert.deepEqual(tasks, []);
    assert.ok(tree.exists('/apps/shop/package.json'));
    assert.equal(json(tree, '/apps/shop/package.json').name, 'acme-shop');
  });

  it('leaves a tree that passes its own format check with a long name (what the rename pushed past the width is formatted)', async () => {
    const name = 'nordic-fjord-outfitters-and-mountain-supply-company';
    const testRunner = runner();
    const tree = await testRunner.runSchematic('ng-new', {
      name,
      skipInstall: true,
      skipGit: true,
    });
    const { scaffoldFiles } = await import('../../schematics/template.cjs');
    const renamed = scaffoldFiles({ name });
    const reformatted = [...renamed.keys()].filter(
      (path) => tree.readContent(`/${name}/${path}`) !== renamed.get(path).toString('utf8'),
    );
    assert.ok(reformatted.length > 0, 'the name is long enough to push a line past the width');
    const dir = mkdtempSync(join(tmpdir(), 'long-name-'));
    try {
      for (const path of tree.files.filter((file) => file.startsWith(`/${name}/`))) {
        const file = join(dir, path.slice(name.length + 2));
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, tree.read(path));
      }
      // The app's own check (its package.json's format:check), with its .prettierrc and ignores.
      const check = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/prettier/bin/prettier.cjs'), '--check', '.'],
        { cwd: dir, encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a name npm or Angular cannot use, with the reason', async () => {
    for (const name of ['Acme', 'acme_shop', '1shop', 'acme--shop', 'acme-', '../evil', 'a b']) {
      await assert.rejects(runner().runSchematic('ng-new', { name }), /cannot name an app/, name);
    }
  });
});

describe('parts.json', () => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);

  it('puts every file of the repository in exactly one part', () => {
    assert.ok(tracked.length > 100, 'git lists the repository');
    assert.deepEqual(
      tracked.filter((path) => parts.ownersOf(path).length === 0),
      [],
      'files of no part: add a pattern to schematics/parts.json',
    );
    const ambiguous = tracked
      .filter((path) => parts.ownersOf(path).length > 1)
      .map(
        (path) =>
          `${path}: ${parts
            .ownersOf(path)
            .map(({ part }) => part)
            .join(', ')}`,
      );
    assert.deepEqual(
      ambiguous,
      [],
      'files two parts claim as specifically: make one pattern more specific',
    );
  });

  it('gives the most specific pattern the file, whatever the order', () => {
    for (const [path, part, kind] of [
      ['server/server.ts', 'origin', 'files'],
      ['scripts/check-patches.mjs', 'origin', 'files'],
      ['scripts/lib/http.mjs', 'tools', 'files'],
      ['scripts/run-tests.mjs', 'workspace', 'files'],
      ['test/server/origin.test.mjs', 'origin', 'tests'],
      ['test/server/bun.test.mjs', 'bench', 'tests'],
      ['docs/render-cache.md', 'origin', 'docs'],
      ['docs/benchmark.md', 'bench', 'docs'],
      ['src/app/pages/product.ts', 'demo', 'files'],
      ['src/api/api.ts', 'demo', 'files'],
      ['src/main.server.ts', 'app', 'files'],
      ['src/app/pages/not-found.ts', 'app', 'files'],
      ['public/async-work.json', 'demo', 'files'],
      ['public/favicon.ico', 'app', 'files'],
      ['tsconfig.spec.json', 'workspace', 'files'],
      ['eslint.config.mjs', 'workspace', 'files'],
      ['.prettierignore', 'workspace', 'files'],
      ['schematics/ng-new/minimal/src/app/app.ts', 'minimal', 'files'],
      ['schematics/template.cjs', 'template', 'files'],
      ['deploy/kubernetes/deployment.yaml', 'deploy', 'files'],
      ['deploy/varnish/default.vcl', 'cdn', 'files'],
      // Generated from the demo's routes: an app without the demo has its own.
      ['deploy/varnish/inputs.vcl', 'demo', 'files'],
      ['schematics/ng-new/minimal/deploy/varnish/inputs.vcl', 'minimal', 'files'],
      ['test/deploy/varnish.test.mjs', 'cdn', 'tests'],
    ]) {
      assert.deepEqual(parts.ownersOf(path), [{ part, kind }], path);
    }
    assert.deepEqual(parts.ownersOf('dist/server/server.mjs'), [], 'build output is in no part');
  });

  it("declares in package.json every package the origin's files import, so ng add can add each at its version", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const declared = { ...pkg.dependencies, ...pkg.devDependencies };
    const origin = tracked.filter(
      (path) =>
        parts.ownerOf(path)?.part === 'origin' &&
        parts.ownerOf(path).kind === 'files' &&
        /\.[cm]?[jt]s$/.test(path),
    );
    const imported = parts.packagesImportedBy(
      origin.map((path) => [path, readFileSync(join(ROOT, path), 'utf8')]),
      pkg,
    );
    for (const name of ['koa', '@koa/router', 'beasties', 'lru-cache', '@types/koa'])
      assert.ok(imported.has(name), `${name} is found`);
    assert.deepEqual(
      [...imported].filter((name) => !declared[name]),
      [],
    );
  });

  it("leaves the bench's peers to bench/package.json: the workspace's install never has them", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const declared = { ...pkg.dependencies, ...pkg.devDependencies };
    const read = (path) => readFileSync(join(ROOT, path), 'utf8');
    const nested = parts.nestedPackages(tracked, read);
    assert.deepEqual(
      nested.map(({ dir }) => dir),
      ['bench/'],
    );
    const peers = nested[0].names;
    for (const name of [
      'express',
      'fastify',
      '@fastify/static',
      'elysia',
      '@elysiajs/static',
      'bun',
    ])
      assert.ok(peers.has(name) && !declared[name], `${name} is the bench's alone`);
    const benchCode = tracked
      .filter((path) => path.startsWith('bench/') && parts.isCode(path))
      .map((path) => [path, read(path)]);
    const imported = parts.packagesImportedBy(benchCode, pkg, nested);
    assert.ok(!imported.has('express') && imported.has('autocannon'));
    // What the bench imports from neither is a package of another's: etag (Koa's, Express's) and
    // content-type (Koa's, patched; bench/patches.mjs resolves it from the workspace).
    assert.deepEqual([...imported].filter((name) => !declared[name]).sort(), [
      'content-type',
      'etag',
    ]);
    const lock = JSON.parse(read('bench/package-lock.json'));
    assert.deepEqual(
      lock.packages[''].dependencies,
      JSON.parse(read('bench/package.json')).dependencies,
    );
  });

  it('reads the package of a bare import', () => {
    assert.equal(parts.packageOf('beasties/compiler'), 'beasties');
    assert.equal(parts.packageOf('@angular/ssr/node'), '@angular/ssr');
    assert.equal(parts.packageOf('node:fs'), '@types/node');
    assert.equal(parts.packageOf('fs'), '@types/node');
    assert.deepEqual(
      parts.importsOf(
        "import a from 'a';\nexport { b } from './b.mjs';\nconst c = await import('c/d');\nrequire('e');",
      ),
      ['a', './b.mjs', 'c/d', 'e'],
    );
  });
});

/** A real `ng new stock --ssr` workspace, made by Angular's own schematic. */
async function stockApp(options = {}) {
  const testRunner = runner();
  return testRunner.runExternalSchematic('@schematics/angular', 'ng-new', {
    name: 'stock',
    version: '22.2.0',
    ssr: true,
    skipInstall: true,
    skipGit: true,
    directory: '.',
    style: 'css',
    ...options,
  });
}

/** Relative imports of the tree's scripts that name no file of the tree. */
function unresolvedImports(tree) {
  const missing = [];
  for (const path of tree.files.filter(
    (file) => /\.(?:[cm]?js|m?ts)$/.test(file) && !file.includes('/node_modules/'),
  )) {
    for (const [, specifier] of tree
      .readContent(path)
      .matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      const target = join(path, '..', specifier);
      const candidates = [target, `${target}.ts`, target.replace(/\.mjs$/, '.d.mts')];
      if (!candidates.some((candidate) => tree.exists(candidate)))
        missing.push(`${path} → ${specifier}`);
    }
  }
  return missing;
}

function snapshot(tree) {
  return new Map(tree.files.map((path) => [path, tree.readContent(path)]));
}

describe('ng-add', () => {
  it('makes the origin the SSR entry of a stock ng new --ssr app', async () => {
    const stock = await stockApp();
    const before = snapshot(stock);
    const testRunner = runner();
    const tree = await testRunner.runSchematic('ng-add', { project: 'stock' }, stock);
    for (const path of [
      '/server/server.ts',
      '/server/origin.ts',
      '/patches/koa+3.3.0.patch',
      '/scripts/ensure-build.mjs',
    ]) {
      assert.ok(tree.exists(path), `${path} is added`);
    }
    assert.ok(!tree.exists('/bench/run.mjs'), 'the bench only with --bench');
    assert.deepEqual(unresolvedImports(tree), [], 'everything the origin imports came along');
    const pkg = json(tree, '/package.json');
    for (const name of [
      'koa',
      '@koa/router',
      'koa-static',
      'koa-conditional-get',
      'pino',
      'lru-cache',
      'patch-package',
    ]) {
      assert.ok(pkg.dependencies[name], `${name} is a dependency`);
    }
    assert.equal(
      pkg.scripts.postinstall,
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.postinstall,
    );
    // The app's build stays where it was (Angular's default, dist/<name>): whatever starts it works.
    assert.match(pkg.scripts['serve:ssr'], / dist\/stock\/server\/server\.mjs$/);
    assert.equal(
      pkg.scripts['serve:ssr:stock'],
      'node dist/stock/server/server.mjs',
      "the app's own script is left as it was, and starts the origin now",
    );
    assert.equal(
      JSON.parse(before.get('/package.json')).scripts['serve:ssr:stock'],
      pkg.scripts['serve:ssr:stock'],
    );
    assert.equal(
      pkg.scripts.build,
      'ng build && node scripts/compress-build.mjs',
      'npm run build writes the compressed copies serve:ssr serves',
    );
    assert.equal(pkg.type, undefined, "the app's .js files load as they did");
    const templatePkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(
      pkg.dependencies['content-type'],
      '1.0.5',
      'a patched package is a direct dependency at its patch version',
    );
    for (const name of ['@angular/core', '@angular/ssr', '@angular/build']) {
      assert.equal(
        pkg.dependencies[name] ?? pkg.devDependencies[name],
        templatePkg.dependencies[name] ?? templatePkg.devDependencies[name],
        `${name} is pinned to the patched version`,
      );
    }
    const build = json(tree, '/angular.json').projects.stock.architect.build.options;
    assert.equal(build.ssr.entry, 'server/server.ts');
    assert.equal(build.outputPath, undefined, "the app's outputPath is kept (none: dist/stock)");
    assert.ok(build.externalDependencies.includes('koa'));
    assert.deepEqual(build.security.allowedHosts, ['localhost', '127.0.0.1']);
    assert.match(tree.readContent('/tsconfig.app.json'), /"server\/\*\*\/\*\.ts"/);
    const main = tree.readContent('/src/main.server.ts');
    assert.match(main, /export \{ CommonEngine \} from '@angular\/ssr\/node'/);
    assert.match(main, /export \{ serverRoutes \} from '\.\/app\/app\.routes\.server'/);
    for (const [path, content] of before) {
      if (path.startsWith('/src/app/') || path === '/src/server.ts' || path === '/src/main.ts') {
        assert.equal(tree.readContent(path), content, `${path} is left alone`);
      }
    }
    // What the docs import, in the app's own src/app/, from their one source (the tests' app's).
    for (const path of ['src/app/render-inputs.ts', 'src/app/cache-groups.ts'])
      assert.equal(
        tree.readContent(`/${path}`),
        readFileSync(join(ROOT, parts.appFileSource(path)), 'utf8'),
        path,
      );
    assert.match(
      tree.readContent('/docs/your-app.md'),
      /import \{ renderInputs \} from '\.\/render-inputs'/,
    );
    assert.match(
      tree.readContent('/docs/revalidation.md'),
      /import \{ addCacheGroups \} from '\.\.\/cache-groups'/,
    );
    assert.deepEqual(
      testRunner.tasks.map((task) => task.name),
      ['node-package'],
    );
    assert.equal(
      testRunner.tasks[0].options.allowScripts,
      true,
      'the install applies the patches (postinstall)',
    );
  });

  it("brings the origin's manual as it applies to the app: its build's place, no demo, links that resolve", async () => {
    const tree = await runner().runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      await stockApp(),
    );
    const docs = tree.files.filter((path) => path.startsWith('/docs/'));
    // Every page its messages name (the log's hosts-and-proxies.md among them), none about the
    // template's own test suites or, without --bench, the bench.
    for (const page of ['your-app', 'hosts-and-proxies', 'render-cache-and-cdn', 'revalidation'])
      assert.ok(docs.includes(`/docs/${page}.md`), page);
    assert.ok(!docs.includes('/docs/testing.md') && !docs.includes('/docs/benchmark.md'));
    for (const doc of docs) {
      const text = tree.readContent(doc);
      assert.doesNotMatch(
        text,
        /section:(demo|bench|template)/,
        `${doc}: no demo or bench sections`,
      );
      assert.doesNotMatch(
        text,
        /(?<![\w./-])dist\/(?:server|browser)/,
        `${doc}: the app builds into dist/stock/`,
      );
      for (const [, target] of text.matchAll(/\]\((?![a-z]+:|#)([^)#\s]+)/g)) {
        const resolved = join(dirname(doc), target);
        assert.ok(tree.exists(resolved), `${doc} links to ${target}, which the app has`);
      }
    }
    assert.match(
      tree.readContent('/docs/scaling-and-deploying.md'),
      /dist\/stock\/server\/server\.mjs/,
    );
  });

  it('says what the deploy starts now, and on which Node', async () => {
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    await testRunner.runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      await stockApp(),
    );
    const log = logs.join('\n');
    const range = JSON.parse(
      readFileSync(join(ROOT, 'node_modules/@angular/core/package.json'), 'utf8'),
    ).engines.node;
    const deploy = log.split('\n').filter((line) => line.startsWith('Deploy: '));
    assert.equal(deploy.length, 1, log);
    assert.ok(
      deploy[0].includes(
        `starts dist/stock/server/server.mjs, now the origin, on the Node ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies.node}`,
      ),
      deploy[0],
    );
    assert.ok(deploy[0].includes('`npm run serve:ssr:stock`'), 'the old script is named');
    assert.ok(deploy[0].includes(`Angular's range ${range}`), deploy[0]);
    assert.match(
      log,
      /Changed: script build was "ng build": now "ng build && node scripts\/compress-build\.mjs"/,
    );
    assert.match(log, /Added: the origin's manual in docs\/ \(\d+ pages/);
    for (const helper of ['render-inputs', 'cache-groups'])
      assert.match(log, new RegExp(`^Added: src/app/${helper}\\.ts: .+\\(docs/[a-z-]+\\.md`, 'm'));
  });

  it("keeps an app's own file where the docs' helpers or pages would go, and says so", async () => {
    const app = await stockApp();
    app.create('/src/app/cache-groups.ts', 'export const mine = 1;\n');
    app.create('/docs/architecture.md', '# Our architecture\n');
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    const tree = await testRunner.runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      app,
    );
    assert.equal(tree.readContent('/src/app/cache-groups.ts'), 'export const mine = 1;\n');
    assert.equal(tree.readContent('/docs/architecture.md'), '# Our architecture\n');
    assert.match(
      logs.join('\n'),
      /Kept as they are \(yours differ from the origin's\): src\/app\/cache-groups\.ts, docs\/architecture\.md/,
    );
  });

  it("keeps an outputPath's base, and puts its browser and server folders where the origin reads them", async () => {
    const app = await stockApp();
    edit(app, '/angular.json', (ws) => {
      ws.projects.stock.architect.build.options.outputPath = { base: 'out/shop', browser: '' };
      return ws;
    });
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    const tree = await testRunner.runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      app,
    );
    assert.deepEqual(
      json(tree, '/angular.json').projects.stock.architect.build.options.outputPath,
      { base: 'out/shop', browser: 'browser', server: 'server' },
    );
    assert.match(
      json(tree, '/package.json').scripts['serve:ssr'],
      / out\/shop\/server\/server\.mjs$/,
    );
    assert.match(logs.join('\n'), /outputPath's folders were browser "", server "server"/);
  });

  it('brings the CDN: deploy/varnish/ as the template has it, an inputs.vcl for no declared input, npm run varnish:inputs, and the steps to run it', async () => {
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    const tree = await testRunner.runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      await stockApp(),
    );
    for (const path of [
      'deploy/varnish/default.vcl',
      'deploy/varnish/inputs.mjs',
      'deploy/varnish/inputs-vcl.mjs',
    ])
      assert.equal(tree.readContent(`/${path}`), readFileSync(join(ROOT, path), 'utf8'), path);
    // Not the demo's (a currency cookie): what the generator makes of routes that declare none.
    const inputs = tree.readContent('/deploy/varnish/inputs.vcl');
    assert.equal(inputs, vclForInputs([]));
    assert.match(inputs, /cookie\.keep\(""\);/);
    assert.doesNotMatch(inputs, /currency/);
    assert.ok(
      !tree.exists('/deploy/kubernetes/deployment.yaml'),
      "the manifests stay the template's",
    );
    const templatePkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(
      json(tree, '/package.json').scripts['varnish:inputs'],
      templatePkg.scripts['varnish:inputs'],
    );
    const log = logs.join('\n');
    assert.match(
      log,
      /^CDN: deploy\/varnish\/ is a Varnish configuration .*docs\/render-cache-and-cdn\.md/m,
    );
    assert.match(
      log,
      /^- the origin's address: `backend origin_1` at the top of deploy\/varnish\/default\.vcl/m,
    );
    assert.match(
      log,
      /^- `npm run varnish:inputs` writes deploy\/varnish\/inputs\.vcl from your routes' renderInputs\(\)/m,
    );
    assert.match(log, /varnishd -a :6081 -f "\$PWD\/deploy\/varnish\/default\.vcl"/);
    assert.ok(
      log.includes(
        'REVALIDATE_TOKEN=<at least 32 characters>, CACHE_GROUP_ALIASES=xkey, CDN_PURGE_URL=http://<varnish>/.origin/purge/{mode}/{groups} and CDN_PURGE_METHOD=PURGE',
      ),
      log,
    );
  });

  it('keeps the inputs.vcl npm run varnish:inputs wrote when run again', async () => {
    const once = await runner().runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      await stockApp(),
    );
    const generated = readFileSync(join(ROOT, 'deploy/varnish/inputs.vcl'), 'utf8');
    once.overwrite('/deploy/varnish/inputs.vcl', generated);
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    const twice = await testRunner.runSchematic('ng-add', { project: 'stock' }, once);
    assert.equal(twice.readContent('/deploy/varnish/inputs.vcl'), generated);
    assert.deepEqual(logs, [`Nothing to change: stock already runs on the origin.`]);
  });

  it('changes nothing more when run twice', async () => {
    const once = await runner().runSchematic(
      'ng-add',
      { project: 'stock', skipInstall: true },
      await stockApp(),
    );
    const first = snapshot(once);
    const testRunner = runner();
    const logs = [];
    testRunner.logger.subscribe((entry) => logs.push(entry.message));
    const twice = await testRunner.runSchematic('ng-add', { project: 'stock' }, once);
    assert.deepEqual(snapshot(twice), first);
    assert.deepEqual(testRunner.tasks, [], 'and installs nothing');
    assert.ok(
      logs.some((line) => /Nothing to change/.test(line)),
      logs.join('\n'),
    );
  });

  it('--engine sets the engine that renders when RENDER_ENGINE is unset, and says how to switch', async () => {
    const CONFIG = '/server/config.ts';
    const templateConfig = readFileSync(join(ROOT, 'server/config.ts'), 'utf8');
    const run = async (options, tree) => {
      const testRunner = runner();
      const logs = [];
      testRunner.logger.subscribe((entry) => logs.push(entry.message));
      const result = await testRunner.runSchematic(
        'ng-add',
        { project: 'stock', skipInstall: true, ...options },
        tree,
      );
      return { tree: result, log: logs.join('\n') };
    };
    const common = await run({}, await stockApp());
    assert.equal(common.tree.readContent(CONFIG), templateConfig, 'common: the template as it is');
    assert.match(
      common.log,
      /Pages render through CommonEngine; RENDER_ENGINE=app renders through AngularNodeAppEngine/,
    );
    const app = await run({ engine: 'app' }, await stockApp());
    const config = app.tree.readContent(CONFIG);
    assert.match(config, /RENDER_ENGINES: RenderEngine\[\] = \['app', 'common'\];/);
    assert.equal(
      config.replace("['app', 'common']", "['common', 'app']"),
      templateConfig,
      'nothing else',
    );
    assert.match(
      app.log,
      /Pages render through AngularNodeAppEngine; RENDER_ENGINE=common renders through CommonEngine/,
    );
    // Run again without --engine: the app keeps its choice; with it, the choice changes.
    const again = await run({}, app.tree);
    assert.equal(again.tree.readContent(CONFIG), config);
    const back = await run({ engine: 'common' }, app.tree);
    assert.equal(back.tree.readContent(CONFIG), templateConfig);
  });

  it('--bench adds the bench, its peers and the stock build', async () => {
    const stock = await stockApp();
    const stockPkg = json(stock, '/package.json');
    const tree = await runner().runSchematic(
      'ng-add',
      { project: 'stock', bench: true, skipInstall: true },
      stock,
    );
    assert.ok(tree.exists('/bench/run.mjs'));
    assert.deepEqual(unresolvedImports(tree), [], 'everything the bench imports came along');
    assert.equal(
      json(tree, '/load-paths.json').prerendered,
      '/',
      "load-paths.json names the app's pages, not the demo's",
    );
    assert.equal(json(tree, '/load-paths.json').rendered, undefined);
    assert.ok(tree.exists('/docs/benchmark.md'), "the bench's doc comes with it");
    const pkg = json(tree, '/package.json');
    assert.ok(pkg.devDependencies.autocannon, 'the load generator, which tools share');
    const peers = json(tree, '/bench/package.json').dependencies;
    assert.ok(peers.fastify && peers.bun, "the peers come in the bench's own package.json");
    assert.equal(
      json(tree, '/bench/package-lock.json').packages[''].dependencies.fastify,
      peers.fastify,
    );
    // Not added to the app's own (the stock app's Express, which its server.ts uses, stays as it was).
    for (const peer of Object.keys(peers))
      assert.equal(
        pkg.devDependencies[peer] ?? pkg.dependencies[peer],
        stockPkg.devDependencies[peer] ?? stockPkg.dependencies[peer],
        `${peer} is not added to the app's package.json`,
      );
    assert.ok(pkg.scripts.bench);
    assert.ok(
      json(tree, '/angular.json').projects.stock.architect.build.configurations['bench-stock'],
    );
    const gitignore = tree.readContent('/.gitignore');
    assert.ok(gitignore.startsWith(stock.readContent('/.gitignore')), "the app's lines stay");
    for (const line of [
      '/bench/node_modules',
      '/bench/.install.lock',
      '/dist-bench',
      '/bench/results/*',
      '!/bench/results/.gitkeep',
    ]) {
      assert.ok(gitignore.split('\n').includes(line), `${line} is ignored`);
      assert.ok(
        readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n').includes(line),
        `as in the template's own .gitignore: ${line}`,
      );
    }
    const again = await runner().runSchematic(
      'ng-add',
      { project: 'stock', bench: true, skipInstall: true },
      tree,
    );
    assert.equal(again.readContent('/.gitignore'), gitignore, 'once');
  });

  it("--bench names a page the app's server routes prerender in load-paths.json", async () => {
    const app = await stockApp();
    app.overwrite(
      '/src/app/app.routes.server.ts',
      `import { RenderMode, ServerRoute } from '@angular/ssr';
export const serverRoutes: ServerRoute[] = [
  { path: 'products/:id', renderMode: RenderMode.Prerender },
  { path: 'about', renderMode: RenderMode.Prerender },
  { path: '**', renderMode: RenderMode.Server },
];
`,
    );
    const tree = await runner().runSchematic(
      'ng-add',
      { project: 'stock', bench: true, skipInstall: true },
      app,
    );
    assert.equal(json(tree, '/load-paths.json').prerendered, '/about');
  });

  for (const [why, change, reason] of [
    [
      'another Angular major',
      (tree) =>
        edit(
          tree,
          '/package.json',
          (pkg) => ((pkg.dependencies['@angular/core'] = '^21.0.0'), pkg),
        ),
      /made for Angular 22/,
    ],
    ['no server rendering', null, /no server rendering/],
    [
      'the webpack builders',
      (tree) =>
        edit(
          tree,
          '/angular.json',
          (ws) => (
            (ws.projects.stock.architect.build.builder = '@angular-devkit/build-angular:browser'),
            ws
          ),
        ),
      /needs @angular\/build:application/,
    ],
  ]) {
    it(`stops with a one-line reason and changes nothing on ${why}`, async () => {
      const app = await stockApp(why === 'no server rendering' ? { ssr: false } : {});
      change?.(app);
      const before = snapshot(app);
      await assert.rejects(runner().runSchematic('ng-add', { project: 'stock' }, app), (error) => {
        assert.match(error.message, reason);
        assert.doesNotMatch(error.message, /\n/, 'one line');
        return true;
      });
      assert.deepEqual(snapshot(app), before);
    });
  }
});

function edit(tree, path, change) {
  tree.overwrite(path, JSON.stringify(change(JSON.parse(tree.readContent(path))), null, 2));
}
