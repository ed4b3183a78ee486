'use strict';
// Reads parts.json: which part a template file belongs to, and which packages a set of files
// imports. ng new, ng add and the tests ask here, so the template's parts are listed once.
const { readFileSync } = require('node:fs');
const { builtinModules } = require('node:module');
const { join, posix } = require('node:path');

const MANIFEST = 'schematics/parts.json';
/** @type {Record<string, { description: string, files?: string[], tests?: string[], docs?: string[], scripts?: string[], packages?: Record<string, string> }>} */
const MANIFEST_JSON = JSON.parse(readFileSync(join(__dirname, 'parts.json'), 'utf8'));
const PARTS = MANIFEST_JSON.parts;
/** Where the one source of each app file is: the same path under this folder (the tests' app). */
const APP_FILES_FROM = MANIFEST_JSON.appFilesFrom;
/** The lists of a part that name files; ng add brings `files` only. */
const KINDS = ['files', 'tests', 'docs'];

function matches(pattern, path) {
  if (pattern.endsWith('/')) return path.startsWith(pattern);
  if (!pattern.includes('*')) return path === pattern;
  const source = pattern
    .split('*')
    .map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}$`).test(path);
}

/** How specific a pattern is: a path beats any pattern; otherwise the longer literal start wins. */
function rank(pattern) {
  if (pattern.includes('*')) return pattern.indexOf('*');
  return pattern.endsWith('/') ? pattern.length : Infinity;
}

/** Every `{ part, kind }` whose pattern for `path` is the most specific: one, or none, or (a manifest to fix) several. */
function ownersOf(path) {
  let best = -1;
  let owners = [];
  for (const [part, lists] of Object.entries(PARTS)) {
    for (const kind of KINDS) {
      for (const pattern of lists[kind] ?? []) {
        if (!matches(pattern, path)) continue;
        const specificity = rank(pattern);
        if (specificity > best) {
          best = specificity;
          owners = [{ part, kind }];
        } else if (specificity === best) {
          owners.push({ part, kind });
        }
      }
    }
  }
  return owners;
}

/** The `{ part, kind }` of `path`, or undefined for a file of no part. */
function ownerOf(path) {
  const owners = ownersOf(path);
  if (owners.length > 1) {
    throw new Error(
      `${path} belongs to ${owners.map(({ part, kind }) => `${part} (${kind})`).join(' and ')} in ${MANIFEST}: make one pattern more specific.`,
    );
  }
  return owners[0];
}

/** A file whose imports are read: JavaScript or TypeScript, of any module kind. */
const isCode = (path) => /\.[cm]?[jt]s$/.test(path);
// Static and dynamic imports, re-exports and require(): what a bundler or Node would load.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+|\brequire\s*\(\s*)['"]([^'"\s]+)['"]/gm;

/** The specifiers a source file imports. */
function importsOf(text) {
  return [...text.matchAll(IMPORT)].map(([, specifier]) => specifier);
}

/** `paths` and every file of `available` they import by a relative path, transitively. */
function withImports(paths, available, root) {
  const result = new Set(paths);
  const queue = [...paths];
  while (queue.length) {
    const path = queue.pop();
    if (!isCode(path)) continue;
    for (const specifier of importsOf(readFileSync(join(root, path), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(path), specifier));
      if (available.has(target) && !result.has(target)) {
        result.add(target);
        queue.push(target);
      }
    }
  }
  return result;
}

/** The npm package a bare specifier loads (`@koa/router`, `beasties/compiler` → `beasties`); Node's own modules are typed by @types/node. */
function packageOf(specifier) {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return '@types/node';
  return /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*/.exec(specifier)?.[0];
}

/**
 * The folders with a package.json of their own among `paths` (bench/, whose peers install into
 * bench/node_modules), each with the packages it declares: `{ dir: 'bench/', names: Set }`.
 * @param {string[]} paths @param {(path: string) => string} read
 */
function nestedPackages(paths, read) {
  return (
    paths
      .filter((path) => path.endsWith('/package.json'))
      .map((path) => {
        const pkg = JSON.parse(read(path));
        return {
          dir: path.slice(0, -'package.json'.length),
          names: new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })),
        };
      })
      // One that declares no package (server/'s, which only says its files are ES modules) installs
      // nothing: its folder's imports are the workspace's.
      .filter(({ names }) => names.size > 0)
  );
}

/**
 * The packages `files` (path → text) import, with the @types package of each where `pkg` (the
 * template's package.json) declares one. Relative imports are files, not packages; so is what a
 * file under a folder of `nested` (nestedPackages) imports from that folder's own package.json:
 * Node finds it there first, and it is never the workspace's.
 * @param {{ dir: string, names: Set<string> }[]} [nested]
 */
function packagesImportedBy(files, pkg, nested = []) {
  const declared = { ...pkg.dependencies, ...pkg.devDependencies };
  const names = new Set();
  for (const [path, text] of files) {
    if (!isCode(path)) continue;
    const own = nested.filter(({ dir }) => path.startsWith(dir));
    for (const specifier of importsOf(text)) {
      if (specifier.startsWith('.') || specifier.startsWith('/')) continue;
      const name = packageOf(specifier);
      if (!name || own.some(({ names: local }) => local.has(name))) continue;
      names.add(name);
      const types = `@types/${name.replace(/^@/, '').replace('/', '__')}`;
      if (declared[types]) names.add(types);
    }
  }
  return names;
}

/** What a part needs that no import shows (a binary run by a script or spawned). */
function packagesNamedBy(parts) {
  return new Set(parts.flatMap((part) => Object.keys(PARTS[part].packages ?? {})));
}

function scriptsOf(parts) {
  return parts.flatMap((part) => PARTS[part].scripts ?? []);
}

/** The app files (`src/app/…`) `parts` give an app that adopts them, each with what it is for. */
function appFilesOf(parts) {
  return parts.flatMap((part) => Object.entries(PARTS[part].appFiles ?? {}));
}

/** The template file an app file's text comes from: `src/app/x.ts` → `test/app/src/app/x.ts`. */
function appFileSource(path) {
  return posix.join(APP_FILES_FROM, path);
}

/** Where a file under APP_FILES_FROM lands in an app: `test/app/src/app/x.ts` → `src/app/x.ts`. */
function appFilePath(source) {
  if (!source.startsWith(APP_FILES_FROM)) {
    throw new Error(`${source} is not under ${APP_FILES_FROM}: no app file comes from there.`);
  }
  return source.slice(APP_FILES_FROM.length);
}

module.exports = {
  PARTS,
  isCode,
  ownerOf,
  ownersOf,
  importsOf,
  withImports,
  packageOf,
  packagesImportedBy,
  packagesNamedBy,
  nestedPackages,
  scriptsOf,
  appFilesOf,
  appFileSource,
  appFilePath,
};
