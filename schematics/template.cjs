'use strict';
// The template is this repository: `ng new --collection` copies its own files (git's list in a
// checkout, the package's files in a tarball), so there is no second copy of the app to drift.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { join, posix, relative, sep } = require('node:path');
const { formatRewritten } = require('./format.cjs');
const {
  PARTS,
  appFileSource,
  appFilesOf,
  isCode,
  nestedPackages,
  ownerOf,
  packagesImportedBy,
  packagesNamedBy,
  scriptsOf,
} = require('./parts.cjs');

/** The repository (or unpacked package) this collection ships in. */
const TEMPLATE_ROOT = join(__dirname, '..');
/** The template's own name, replaced by the new app's in every text file. */
const TEMPLATE_NAME = 'ssr-origin';
const TEMPLATE_TITLE = 'SSR Origin';
const PACKED_LOCKFILE = 'schematics/package-lock.json';
/** Where a template file is read from: the lockfile of a packed tarball sits in schematics/. */
function sourceOf(root, path) {
  if (existsSync(join(root, path))) return join(root, path);
  if (path === 'package-lock.json') return join(root, PACKED_LOCKFILE);
  return join(root, path.replace(/\.gitignore$/, '.npmignore'));
}

const TEXT =
  /\.(?:[cm]?[jt]s|json|md|html|s?css|ya?ml|txt|patch|svg)$|(?:^|\/)(?:Dockerfile|\.dockerignore|\.gitignore|run|\.gitkeep)$/;

/** A new app's names from its npm name: `acme-shop` → title `Acme Shop`. */
function namesFor(name) {
  if (!/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/.test(name) || name.length > 100) {
    throw new Error(
      `"${name}" cannot name an app: use lowercase letters, digits and single dashes, starting with a letter (e.g. acme-shop).`,
    );
  }
  const title = name
    .split('-')
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join(' ');
  return { name, title };
}

/** The template's files, as paths relative to its root with `/` separators. */
function listTemplateFiles(root = TEMPLATE_ROOT) {
  const all = existsSync(join(root, '.git'))
    ? // A checkout: what git tracks, so local build output and scratch files never leak in.
      execFileSync('git', ['ls-files', '-z'], {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      })
        .split('\0')
        .filter((path) => path && existsSync(join(root, path)))
    : // A packed tarball: its files. npm never packs package-lock.json, so `prepack` puts a copy
      // in schematics/ and it goes back to its place here.
      // npm also renames .gitignore to .npmignore when it installs a package: rename it back.
      [
        ...walk(root, root).map((path) =>
          path.endsWith('.npmignore') &&
          !existsSync(join(root, path.replace(/\.npmignore$/, '.gitignore')))
            ? path.replace(/\.npmignore$/, '.gitignore')
            : path,
        ),
        ...(existsSync(join(root, PACKED_LOCKFILE)) ? ['package-lock.json'] : []),
      ];
  return all.sort();
}

function walk(root, dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === '.git' ? [] : walk(root, full);
    return entry.isFile() ? [relative(root, full).split(sep).join(posix.sep)] : [];
  });
}

/** Text between `<!-- section:NAME -->` and `<!-- /section:NAME -->` (markers included) goes. */
function dropSection(text, section) {
  const pattern = new RegExp(
    `\\n?<!-- section:${section} -->[\\s\\S]*?<!-- /section:${section} -->\\n?`,
    'g',
  );
  return text.replace(pattern, '\n');
}

/** `npm run a && npm run b && …` without the runs of scripts that are gone. */
function dropRuns(command, removed) {
  return command
    .split('&&')
    .map((part) => part.trim())
    .filter((part) => !removed.some((script) => part === `npm run ${script}`))
    .join(' && ');
}

/** The parts a new app leaves out (parts.json): the collection always, the bench and the demo on request. */
function droppedPartsFor({ bench, demo }) {
  return ['template', 'minimal', ...(bench ? [] : ['bench']), ...(demo ? [] : ['demo'])];
}

/** Where the minimal app's files are; each lands at the same path under the new app. */
const MINIMAL = PARTS.minimal.files[0];

/**
 * The packages only the left-out parts need: what their files import or their manifest names, less
 * what the new app's own files import or its parts name. A package a kept file uses without
 * importing it (a builder in angular.json, a binary in a script) would have to be named by that
 * part in parts.json if a left-out part imported it too.
 */
function removedPackagesFor(files, templateFiles, dropped, root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const leftOut = templateFiles.filter(
    (path) => isCode(path) && dropped.includes(ownerOf(path)?.part),
  );
  const kept = Object.keys(PARTS).filter((part) => !dropped.includes(part));
  const appCode = [...files]
    .filter(([path]) => isCode(path))
    .map(([path, content]) => [path, content.toString('utf8')]);
  // A folder with its own package.json (bench/) installs its imports itself: not the app's.
  const nested = nestedPackages(templateFiles, (path) => readFileSync(join(root, path), 'utf8'));
  const needed = new Set([...packagesImportedBy(appCode, pkg, nested), ...packagesNamedBy(kept)]);
  const leftOutCode = leftOut.map((path) => [path, readFileSync(join(root, path), 'utf8')]);
  const candidates = new Set([
    ...packagesImportedBy(leftOutCode, pkg, nested),
    ...packagesNamedBy(dropped),
  ]);
  return [...candidates].filter((name) => !needed.has(name));
}

/**
 * Dependencies of the template only so that an installed tarball can run the collection (npm
 * installs a package's dependencies, never its dev dependencies): in an app they are dev
 * dependencies, as the app's tools use them, and its production install leaves them out.
 */
const DEV_IN_APP = ['prettier'];

/** `deps` sorted by name, as npm writes them. */
const sorted = (deps) =>
  Object.fromEntries(Object.entries(deps).sort(([a], [b]) => (a < b ? -1 : 1)));

/** Moves DEV_IN_APP from `dependencies` to `devDependencies` of a package.json-like object. */
function asDevDependencies(manifest) {
  for (const name of DEV_IN_APP) {
    if (manifest.dependencies?.[name] === undefined) continue;
    manifest.devDependencies = sorted({
      ...manifest.devDependencies,
      [name]: manifest.dependencies[name],
    });
    delete manifest.dependencies[name];
  }
}

function editPackageJson(text, { name, removedScripts, removedPackages }) {
  const pkg = JSON.parse(text);
  pkg.name = name;
  pkg.version = '0.0.0';
  pkg.description = `${namesFor(name).title}: an Angular SSR app`;
  delete pkg.schematics;
  delete pkg['ng-add'];
  delete pkg.files;
  for (const script of removedScripts) delete pkg.scripts[script];
  pkg.scripts.test = dropRuns(pkg.scripts.test, removedScripts);
  // The schematics engine (the collection's); what only the left-out parts import.
  for (const dependency of removedPackages) {
    delete pkg.dependencies[dependency];
    delete pkg.devDependencies[dependency];
  }
  asDevDependencies(pkg);
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function editAngularJson(text, { bench, locales }) {
  const workspace = JSON.parse(text);
  for (const project of Object.values(workspace.projects)) {
    const build = project.architect?.build;
    if (!bench) {
      delete build?.configurations?.['bench-stock'];
      delete build?.configurations?.['bench-i18n'];
      // The bench's localized build was its only use (bench/locale/ goes with the bench).
      if (project.sourceRoot === 'src' && !locales) delete project.i18n;
    }
    if (locales && project.sourceRoot === 'src') localize(project, locales);
  }
  return `${JSON.stringify(workspace, null, 2)}\n`;
}

/**
 * The app in src/ built in its source locale and `locales`, as `ng add @angular/localize` and the
 * i18n guide set it up: translations in src/locale/, served from one origin under /<locale>/.
 */
function localize(project, locales) {
  project.i18n = {
    sourceLocale: SOURCE_LOCALE,
    locales: Object.fromEntries(
      locales.map((locale) => [locale, { translation: `src/locale/messages.${locale}.xlf` }]),
    ),
  };
  const build = project.architect.build;
  build.options.localize = true;
  build.options.polyfills = [...(build.options.polyfills ?? []), '@angular/localize/init'];
  for (const configuration of Object.values(build.configurations ?? {})) {
    if (configuration.polyfills) configuration.polyfills.push('@angular/localize/init');
  }
  // The bench's own localized build would be the same build: not needed.
  delete build.configurations?.['bench-i18n'];
}

/** The source locale of an app started with --locales (the CLI's own default). */
const SOURCE_LOCALE = 'en-US';

/** An empty translation file for `locale`: `ng extract-i18n` fills in what to translate. */
function translationFile(locale) {
  return `<?xml version="1.0" encoding="UTF-8" ?>
<!-- Translations into ${locale}: copy the units \`ng extract-i18n\` writes to src/locale/messages.xlf and
     add a <target> to each (docs/your-app.md#serving-several-languages). -->
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="${SOURCE_LOCALE}" target-language="${locale}" datatype="plaintext" original="ng2.template">
    <body></body>
  </file>
</xliff>
`;
}

/** load-paths.json of a localized app: its pages under the source locale's prefix. */
function localizedLoadPaths(text) {
  const paths = JSON.parse(text);
  const prefix = (path) => `/${SOURCE_LOCALE}${path === '/' ? '' : path}`;
  for (const key of ['prerendered', 'clientOnly', 'notFound']) {
    if (typeof paths[key] === 'string') paths[key] = prefix(paths[key]);
  }
  for (const key of ['rendered', 'data', 'personal']) {
    if (paths[key]?.path) paths[key].path = prefix(paths[key].path);
  }
  if (paths.personal?.private?.path)
    paths.personal.private.path = prefix(paths.personal.private.path);
  return `${JSON.stringify(paths, null, 2)}\n`;
}

/**
 * The locales of `--locales fr,de`: BCP 47 tags Angular has data for, not the source locale, each
 * once. Undefined for none.
 */
function parseLocales(value) {
  if (value === undefined || value === '') return undefined;
  const locales = String(value)
    .split(',')
    .map((locale) => locale.trim());
  for (const locale of locales) {
    if (!/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(locale) || locale === SOURCE_LOCALE) {
      throw new Error(
        `--locales: "${locale}" is not a locale to add (e.g. --locales fr,de; ${SOURCE_LOCALE} is the source locale).`,
      );
    }
  }
  if (new Set(locales).size !== locales.length) {
    throw new Error(`--locales: a locale is named twice in "${value}".`);
  }
  return locales;
}

/** A lockfile entry marked as needed by dev dependencies only, the flag where npm puts it. */
function withDevFlag(entry) {
  const out = {};
  for (const [key, value] of Object.entries(entry)) {
    out[key] = value;
    if (key === 'integrity') out.dev = true;
  }
  out.dev = true;
  return out;
}

function editLockfile(text, { name }) {
  const lock = JSON.parse(text);
  lock.name = name;
  if (lock.packages?.['']) {
    lock.packages[''].name = name;
    asDevDependencies(lock.packages['']);
  }
  for (const dependency of DEV_IN_APP) {
    const entry = lock.packages?.[`node_modules/${dependency}`];
    // Where npm writes the flag: after integrity (or version), as it would for a dev dependency.
    if (entry && !entry.dev) lock.packages[`node_modules/${dependency}`] = withDevFlag(entry);
  }
  return `${JSON.stringify(lock, null, 2)}\n`;
}

/** README.md and docs/: what is about parts or scripts the app does not have goes. */
function editDoc(text, { bench, demo, removedScripts }) {
  // Table rows about scripts the app does not have go with them.
  let out = text
    .split('\n')
    .filter((line) => !removedScripts.some((script) => line.startsWith(`| \`npm run ${script}\``)))
    .join('\n');
  out = dropSection(out, 'template');
  if (!bench) out = dropSection(out, 'bench');
  if (!demo) out = dropSection(out, 'demo');
  return out;
}

/** Per-file edits after the names are replaced; each knows the options. */
const EDITS = {
  'package.json': editPackageJson,
  'angular.json': editAngularJson,
  'package-lock.json': editLockfile,
  'README.md': editDoc,
  // The template's own pack-time lines (see its package.json prepack) mean nothing in an app.
  '.gitignore': (text) =>
    text.replace(
      /\n# npm never packs package-lock\.json[^\n]*\n\/schematics\/package-lock\.json\n/,
      '\n',
    ),
  'tsconfig.app.json': (text, { bench, locales }) => {
    let out = bench ? text : text.replace(/,\s*"bench\/variants\/\*\*\/\*\.ts"/, '');
    // $localize's global type, as `ng add @angular/localize` adds it.
    if (locales) out = out.replace('"types": ["node"]', '"types": ["node", "@angular/localize"]');
    return out;
  },
  'load-paths.json': (text, { locales }) => (locales ? localizedLoadPaths(text) : text),
};

/**
 * The files of a new app: path → contents, as copied and renamed, before formatting. Pure apart
 * from reading the template, so the schematic and its tests see the same thing.
 * @param {{ name: string, bench: boolean, demo: boolean }} options
 * @returns {Map<string, Buffer>}
 */
function scaffoldFiles(options, root = TEMPLATE_ROOT) {
  return renamedFiles(options, root).files;
}

/**
 * The files of a new app as `ng new` writes them: scaffoldFiles, with what the renaming changed
 * formatted by the app's own Prettier settings, so the app passes its own `npm test` whatever its
 * name's length.
 * @param {{ name: string, bench: boolean, demo: boolean }} options
 * @returns {Promise<Map<string, Buffer>>}
 */
async function scaffoldApp(options, root = TEMPLATE_ROOT) {
  const { files, rewritten } = renamedFiles(options, root);
  await formatRewritten(files, rewritten);
  return files;
}

/** @returns {{ files: Map<string, Buffer>, rewritten: string[] }} */
function renamedFiles({ name, bench = true, demo = true, locales: asked }, root) {
  const names = namesFor(name);
  const locales = parseLocales(asked);
  const dropped = droppedPartsFor({ bench, demo });
  const templateFiles = listTemplateFiles(root);
  const files = new Map();
  // A file of no part is in no app (test/schematics proves every file of the repository has one).
  for (const path of templateFiles) {
    const part = ownerOf(path)?.part;
    if (part && !dropped.includes(part)) files.set(path, readFileSync(sourceOf(root, path)));
  }
  // The helpers every app gets in its own src/app/ (parts.json appFiles): their one source's text,
  // where the template's own file only re-exports it.
  const kept = Object.keys(PARTS).filter((part) => !dropped.includes(part));
  for (const [path] of appFilesOf(kept)) {
    files.set(path, readFileSync(sourceOf(root, appFileSource(path))));
  }
  if (!demo) {
    // Its README says why it exists: a note for the template, not a file of the app.
    for (const path of templateFiles.filter(
      (file) => file.startsWith(MINIMAL) && file !== `${MINIMAL}README.md`,
    )) {
      files.set(path.slice(MINIMAL.length), readFileSync(join(root, path)));
    }
  }
  for (const locale of locales ?? []) {
    files.set(`src/locale/messages.${locale}.xlf`, Buffer.from(translationFile(locale)));
  }
  const options = {
    name: names.name,
    title: names.title,
    bench,
    demo,
    locales,
    removedScripts: scriptsOf(dropped),
    removedPackages: removedPackagesFor(files, templateFiles, dropped, root),
  };
  const rewritten = [];
  for (const [path, content] of files) {
    if (!TEXT.test(path)) continue;
    const original = content.toString('utf8');
    let text = original
      .replaceAll(TEMPLATE_NAME, names.name)
      .replaceAll(TEMPLATE_TITLE, names.title);
    const edit = EDITS[path] ?? (/^docs\/.+\.md$/.test(path) ? editDoc : undefined);
    if (edit) text = edit(text, options);
    if (text === original) continue;
    files.set(path, Buffer.from(text));
    rewritten.push(path);
  }
  return { files, rewritten };
}

module.exports = {
  TEMPLATE_ROOT,
  TEMPLATE_NAME,
  TEMPLATE_TITLE,
  namesFor,
  listTemplateFiles,
  scaffoldFiles,
  scaffoldApp,
  dropSection,
  editDoc,
};
