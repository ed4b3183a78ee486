// What an install does when a patch no longer fits its package (after `ng update`, say): a real
// `npm install` in a temporary project with the project's own postinstall (patch-package, then
// scripts/check-patches.mjs) fails, naming the patch and the command that fixes it. Offline: the
// patched package is a local folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkPatches, parsePatchName } from '../../scripts/check-patches.mjs';
import { ROOT } from '../helpers/origin.mjs';

const work = mkdtempSync(join(tmpdir(), 'check-patches-'));
after(() => rmSync(work, { recursive: true, force: true }));

const ORIGINAL = "module.exports = function greet(name) {\n  return 'hello ' + name;\n};\n";
const PATCH = `diff --git a/node_modules/greet/index.js b/node_modules/greet/index.js
index 0000000..1111111 100644
--- a/node_modules/greet/index.js
+++ b/node_modules/greet/index.js
@@ -1,3 +1,4 @@
 module.exports = function greet(name) {
+  // Patched (patches/README.md): a test patch.
   return 'hello ' + name;
 };
`;

/** A project depending on a local `greet` package at `version` with `source`, patched for 1.0.0. */
function project(name, version, source) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'vendor/greet'), { recursive: true });
  mkdirSync(join(dir, 'patches'));
  writeFileSync(
    join(dir, 'vendor/greet/package.json'),
    JSON.stringify({ name: 'greet', version, main: 'index.js' }),
  );
  writeFileSync(join(dir, 'vendor/greet/index.js'), source);
  writeFileSync(join(dir, 'patches/greet+1.0.0.patch'), PATCH);
  const postinstall = `"${join(ROOT, 'node_modules/.bin/patch-package')}" && node "${join(ROOT, 'scripts/check-patches.mjs')}" .`;
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name,
      private: true,
      dependencies: { greet: 'file:./vendor/greet' },
      scripts: { postinstall },
    }),
  );
  const result = spawnSync(
    'npm',
    ['install', '--offline', '--install-links', '--no-audit', '--no-fund'],
    {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, CI: '' },
    },
  );
  return { dir, status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

describe('a patch file name', () => {
  it('names the package and the version it is made for, scoped packages included', () => {
    assert.deepEqual(parsePatchName('koa+3.3.0.patch'), { name: 'koa', version: '3.3.0' });
    assert.deepEqual(parsePatchName('@angular+ssr+22.2.0.patch'), {
      name: '@angular/ssr',
      version: '22.2.0',
    });
    assert.deepEqual(parsePatchName('content-type+1.0.5-beta.1.patch'), {
      name: 'content-type',
      version: '1.0.5-beta.1',
    });
  });

  it('is undefined for any other file in patches/', () => {
    for (const file of ['README.md', '.gitkeep', 'koa.patch', 'koa+latest.patch', 'koa+3.3.0.diff'])
      assert.equal(parsePatchName(file), undefined, file);
  });
});

describe('an install with patches', () => {
  it('passes when each patch is applied to its version', () => {
    const { status, output } = project('fits', '1.0.0', ORIGINAL);
    assert.equal(status, 0, output);
  });

  it('fails, naming the patch and the fix, when the package moved to another version', () => {
    const { status, output } = project('moved', '1.1.0', ORIGINAL);
    assert.notEqual(status, 0, 'the install must fail');
    assert.match(
      output,
      /patches\/greet\+1\.0\.0\.patch: made for greet@1\.0\.0, but 1\.1\.0 is installed/,
    );
    assert.match(output, /npx patch-package greet/);
  });

  it('fails when the patch no longer applies, even where patch-package alone exits 0', () => {
    const { status, output } = project(
      'changed',
      '1.0.0',
      "module.exports = (name) => 'hi ' + name;\n",
    );
    assert.notEqual(status, 0, 'the install must fail');
    assert.match(
      output,
      /patches\/greet\+1\.0\.0\.patch: not applied to node_modules\/greet\/index\.js/,
    );
  });

  it('does nothing where the template is installed as a dependency (npx -p, ng add)', () => {
    const copy = join(work, 'app/node_modules/ssr-template');
    mkdirSync(join(copy, 'patches'), { recursive: true });
    writeFileSync(join(copy, 'patches/greet+1.0.0.patch'), PATCH);
    const result = spawnSync(
      process.execPath,
      [join(ROOT, 'scripts/check-patches.mjs'), '--apply', copy],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(result.status, 0, result.stderr);
    const outside = spawnSync(
      process.execPath,
      [join(ROOT, 'scripts/check-patches.mjs'), join(work, 'moved')],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(outside.status, 1, 'the same check fails for an app');
  });

  it("holds for this repository's own install", () => {
    assert.deepEqual(checkPatches(ROOT), []);
  });
});
