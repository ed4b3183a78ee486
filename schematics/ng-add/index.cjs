'use strict';
// `ng add <this>` on an app made by `ng new --ssr`: the origin becomes its SSR entry. Every check
// runs before the first change, so an app it cannot convert is left exactly as it was.
const { readFileSync } = require('node:fs');
const { join, posix } = require('node:path');
const { SchematicsException } = require('@angular-devkit/schematics');
const { NodePackageInstallTask } = require('@angular-devkit/schematics/tasks');
// Node loads this ES module synchronously (require of ESM, Node >= 20.19 and 22.12): the patch
// file names are parsed where the install checks them, in one self-contained script.
const { parsePatchName } = require('../../scripts/check-patches.mjs');
// The same reading of angular.json's outputPath as the scripts the app gets (scripts/lib/paths.mjs).
const { outputPathOf } = require('../../scripts/lib/paths.mjs');
// The inputs.vcl `npm run varnish:inputs` writes, for an app that declares no input yet.
const { vclForInputs } = require('../../deploy/varnish/inputs-vcl.mjs');
const {
  appFilePath,
  appFileSource,
  appFilesOf,
  importsOf,
  isCode,
  nestedPackages,
  ownerOf,
  packagesImportedBy,
  packagesNamedBy,
  scriptsOf,
  withImports,
} = require('../parts.cjs');
const { TEMPLATE_ROOT, editDoc, listTemplateFiles } = require('../template.cjs');

const template = JSON.parse(readFileSync(join(TEMPLATE_ROOT, 'package.json'), 'utf8'));
const templateWorkspace = JSON.parse(readFileSync(join(TEMPLATE_ROOT, 'angular.json'), 'utf8'));
const templateBuild = Object.values(templateWorkspace.projects)[0].architect.build;

/** The parts ng add brings (parts.json): the origin and its CDN, and the bench with --bench. */
const partsFor = (options) => ['origin', 'cdn', ...(options.bench ? ['bench'] : [])];

const DEFAULT_VCL = 'deploy/varnish/default.vcl';
/** What default.vcl includes; the app's own, generated from its routes (parts.json: not the cdn's). */
const INPUTS_VCL = 'deploy/varnish/inputs.vcl';

/** What a user does to put the CDN ng add brought in front of the origin. */
const cdnSteps = () => [
  'CDN: deploy/varnish/ is a Varnish configuration to run in front of the origin (docs/render-cache-and-cdn.md#a-cdn-you-can-run-varnish):',
  `- the origin's address: \`backend origin_1\` at the top of ${DEFAULT_VCL} (.host, .port; one backend per replica, each added in vcl_init);`,
  `- \`npm run varnish:inputs\` writes ${INPUTS_VCL} from your routes' renderInputs() (it builds first when the build is stale): run it before you start Varnish and whenever a declaration changes. The one written now keys pages by their URL alone, as for routes that declare no input;`,
  `- \`varnishd -a :6081 -f "$PWD/${DEFAULT_VCL}" -s malloc,256m\` (an absolute path; Debian's varnish and varnish-modules);`,
  '- purges: start the origin with REVALIDATE_TOKEN=<at least 32 characters>, CACHE_GROUP_ALIASES=xkey, CDN_PURGE_URL=http://<varnish>/.origin/purge/{mode}/{groups} and CDN_PURGE_METHOD=PURGE: a revalidation then purges the same groups and paths in Varnish.',
];

/**
 * The pages npm run bench loads (docs/your-app.md#load-pathsjson-what-the-tools-load), for an app
 * whose first prerendered page is `prerendered`.
 */
const userLoadPaths = (prerendered) =>
  `${JSON.stringify(
    {
      $comment:
        'The pages npm run bench loads (docs/your-app.md#load-pathsjson-what-the-tools-load). "prerendered" is a page your server routes prerender. Name a route of yours rendered per request as "rendered": { "path": "/items/{id}", "ids": [1, 1000] } (or "values": ["a", "b"] for slugs), with "cached": true if it declares a shared-cache policy.',
      prerendered,
      notFound: '/no-such-page',
    },
    null,
    2,
  )}\n`;

/**
 * The first page the app's server routes prerender, as a path: `'about'` → `/about`; a `**` route
 * prerendered (the stock app's) prerenders `/`. A route with a parameter needs its values: skipped.
 * Undefined when none is found.
 */
function prerenderedPage(serverRoutes) {
  const prerendered = [
    ...serverRoutes.matchAll(
      /path\s*:\s*['"]([^'"]*)['"]\s*,\s*renderMode\s*:\s*RenderMode\.Prerender\b/g,
    ),
  ].map(([, path]) => path);
  if (prerendered.includes('**') || prerendered.includes('')) return '/';
  const plain = prerendered.find((path) => !/[:*]/.test(path));
  return plain === undefined ? undefined : `/${plain}`;
}

/** What ng add --bench adds to the app's .gitignore, as the template's own has it. */
const BENCH_IGNORED = {
  comment:
    "# The bench's peers, installed on demand (bench/install.mjs), its builds and its results",
  lines: [
    '/bench/node_modules',
    '/bench/.install.lock',
    '/dist-bench',
    '/bench/results/*',
    '!/bench/results/.gitkeep',
  ],
};

/** The packages patches/ patches, from the patch files' names (`content-type+1.0.5.patch`). */
function patchedPackages() {
  return listTemplateFiles()
    .filter((path) => path.startsWith('patches/'))
    .map((path) => parsePatchName(posix.basename(path)))
    .filter(Boolean);
}

/**
 * The files of `parts` and every template file they import. Not their tests or docs: those need
 * the template's test setup and layout, which an existing app does not have.
 */
function filesFor(parts) {
  const available = new Set(listTemplateFiles());
  const own = [...available].filter((path) => {
    const owner = ownerOf(path);
    return owner?.kind === 'files' && parts.includes(owner.part);
  });
  return [...withImports(own, available, TEMPLATE_ROOT)].sort();
}

/** The docs of `parts` (parts.json): the origin's manual, docs/benchmark.md with the bench. */
function docsFor(parts) {
  return listTemplateFiles().filter((path) => {
    const owner = ownerOf(path);
    return owner?.kind === 'docs' && parts.includes(owner.part) && path.startsWith('docs/');
  });
}

/**
 * The app files `parts` give an app (parts.json's appFiles: the helpers the docs import) and what
 * they import, each with the template file its text comes from (its one source, under
 * appFilesFrom), its path in the template's layout and where it lands: `src/app/x.ts` in the
 * app's `<sourceRoot>/app/x.ts`.
 * @returns {{ from: string, path: string, to: string }[]}
 */
function appFilesFor(parts, sourceRoot) {
  const available = new Set(listTemplateFiles());
  const own = appFilesOf(parts).map(([path]) => appFileSource(path));
  return [...withImports(own, available, TEMPLATE_ROOT)].sort().map((from) => {
    const path = appFilePath(from);
    return {
      from,
      path,
      to: path.startsWith('src/') ? posix.join(sourceRoot, path.slice('src/'.length)) : path,
    };
  });
}

/** Markdown links to a relative target that `exists` does not know become their text. */
function unlinkMissing(text, doc, exists) {
  return text.replace(
    /\[([^\]]+)\]\((?![a-z]+:|#)([^)#\s]+)(#[^)\s]*)?\)/g,
    (link, label, target) =>
      exists(posix.normalize(posix.join(posix.dirname(doc), target))) ? link : label,
  );
}

/**
 * A doc of the template as the adopted app gets it: without the sections about the demo (and the
 * bench, without --bench) or the rows about scripts it lacks, its build where the app builds, and
 * links only to what the app has.
 */
function adoptedDoc(path, { bench, removedScripts, output, exists }) {
  let text = editDoc(readFileSync(join(TEMPLATE_ROOT, path), 'utf8'), {
    bench,
    demo: false,
    removedScripts,
  });
  if (output !== 'dist') text = text.replace(/(?<![\w./-])dist\//g, `${output}/`);
  return unlinkMissing(text, path, exists);
}

/**
 * What `files` import from npm and what `parts` name besides (parts.json), each with the section
 * the template has it in. A package the template does not declare comes through another one: it
 * has no version of its own to add.
 */
function packagesFor(files, parts) {
  const code = files
    .filter(isCode)
    .map((path) => [path, readFileSync(join(TEMPLATE_ROOT, path), 'utf8')]);
  // bench/'s peers come with its own package.json and lockfile (bench/install.mjs installs them).
  const nested = nestedPackages(files, (path) => readFileSync(join(TEMPLATE_ROOT, path), 'utf8'));
  const names = new Set([...packagesImportedBy(code, template, nested), ...packagesNamedBy(parts)]);
  return [...names].sort().flatMap((name) => {
    if (template.dependencies[name]) return [{ name, section: 'dependencies' }];
    return template.devDependencies[name] ? [{ name, section: 'devDependencies' }] : [];
  });
}

/** Whether a template file imports a module of its own by its .ts name (`./pages/page.ts`). */
function importsTsExtension(path) {
  return (
    isCode(path) &&
    importsOf(readFileSync(join(TEMPLATE_ROOT, path), 'utf8')).some(
      (specifier) => specifier.startsWith('.') && specifier.endsWith('.ts'),
    )
  );
}

const ORIGIN_EXPORTS = `
// The origin (server/) renders through this bundle's copy of Angular, so the engine and the tokens
// it provides must come from here (see server/main.server.d.mts). CommonEngine is what
// RENDER_ENGINE=common renders with; RENDER_ENGINE=app renders with AngularNodeAppEngine, which
// needs nothing exported here.
export { CommonEngine } from '@angular/ssr/node';
export { LOCALE_ID, REQUEST, REQUEST_CONTEXT, RESPONSE_INIT } from '@angular/core';
export { serverRoutes } from './app/app.routes.server';
`;

const ENGINE_NAMES = { common: 'CommonEngine', app: 'AngularNodeAppEngine' };
const CONFIG_PATH = 'server/config.ts';
/** server/config.ts's list of engines, the default first, for each default. */
const ENGINES_BY_DEFAULT = {
  common: "RENDER_ENGINES: RenderEngine[] = ['common', 'app'];",
  app: "RENDER_ENGINES: RenderEngine[] = ['app', 'common'];",
};

/**
 * server/config.ts as the app has it (or will: the template's) and as --engine wants it, with the
 * engine that renders when RENDER_ENGINE is unset. Without --engine, the app's choice stays.
 */
function engineConfig(tree, options) {
  const text = tree.exists(CONFIG_PATH)
    ? tree.readText(CONFIG_PATH)
    : readFileSync(join(TEMPLATE_ROOT, CONFIG_PATH), 'utf8');
  const current = Object.keys(ENGINES_BY_DEFAULT).find((engine) =>
    text.includes(ENGINES_BY_DEFAULT[engine]),
  );
  if (!current) {
    throw new SchematicsException(
      `Cannot add the origin: ${CONFIG_PATH} has no RENDER_ENGINES list (an origin older than the engine choice?).`,
    );
  }
  const engine = options.engine ?? current;
  const wanted = text.replace(ENGINES_BY_DEFAULT[current], ENGINES_BY_DEFAULT[engine]);
  return { text, wanted, engine, other: engine === 'app' ? 'common' : 'app' };
}

const ESBUILD_BUILDERS = [
  '@angular/build:application',
  '@angular-devkit/build-angular:application',
];

function readJson(tree, path) {
  const buffer = tree.read(path);
  if (!buffer)
    throw new SchematicsException(
      `Cannot add the origin: no ${path} here (run ng add in an Angular workspace).`,
    );
  return JSON.parse(buffer.toString('utf8'));
}

const major = (range) => Number(/(\d+)/.exec(range ?? '')?.[1]);

/** The project to convert and why it can be converted; throws a one-line reason otherwise. */
function inspect(tree, options) {
  const pkg = readJson(tree, 'package.json');
  const workspace = readJson(tree, 'angular.json');
  const coreRange = pkg.dependencies?.['@angular/core'];
  const wanted = major(template.dependencies['@angular/core']);
  if (major(coreRange) !== wanted) {
    throw new SchematicsException(
      `Cannot add the origin: it is made for Angular ${wanted}, this app has @angular/core ${coreRange ?? '(none)'}.`,
    );
  }
  const names = Object.keys(workspace.projects ?? {}).filter(
    (name) => workspace.projects[name].projectType === 'application',
  );
  const projectName = options.project ?? (names.length === 1 ? names[0] : undefined);
  if (!projectName || !workspace.projects[projectName]) {
    throw new SchematicsException(
      `Cannot add the origin: name the application with --project (one of: ${names.join(', ') || 'none'}).`,
    );
  }
  const project = workspace.projects[projectName];
  const build = project.architect?.build;
  if (!ESBUILD_BUILDERS.includes(build?.builder)) {
    throw new SchematicsException(
      `Cannot add the origin: ${projectName} builds with ${build?.builder ?? 'no builder'}; it needs @angular/build:application (ng update migrates webpack apps).`,
    );
  }
  const serverMain = build.options?.server;
  if (!serverMain || !build.options?.ssr || build.options.outputMode !== 'server') {
    throw new SchematicsException(
      `Cannot add the origin: ${projectName} has no server rendering (make it with ng new --ssr, or run ng add @angular/ssr first).`,
    );
  }
  const sourceRoot = project.sourceRoot ?? posix.join(project.root ?? '', 'src');
  const serverRoutes = posix.join(sourceRoot, 'app/app.routes.server.ts');
  if (
    !tree.read(serverMain) ||
    !/export\s+const\s+serverRoutes\b/.test(tree.read(serverRoutes)?.toString('utf8') ?? '')
  ) {
    throw new SchematicsException(
      `Cannot add the origin: ${projectName} has no ${serverMain} or no serverRoutes exported from ${serverRoutes}.`,
    );
  }
  if (posix.dirname(serverMain) !== sourceRoot) {
    throw new SchematicsException(
      `Cannot add the origin: it expects the server main in ${sourceRoot}/, not ${serverMain}.`,
    );
  }
  return { pkg, workspace, projectName, build, serverMain, sourceRoot, serverRoutes };
}

/** Adds `name` at the template's exact version; a version the app already pins is kept. */
function addDependency(section, name, changes) {
  const version = template.dependencies[name] ?? template.devDependencies[name];
  if (!version) throw new Error(`the template has no version for ${name}`);
  if (!section[name]) {
    section[name] = version;
    changes.push(`${name}@${version}`);
  }
}

function sortKeys(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}

/** The Node range the template's Angular declares (what the app is pinned to), if installed. */
function angularNodeRange() {
  try {
    const core = require(require.resolve('@angular/core/package.json', { paths: [TEMPLATE_ROOT] }));
    return core.engines?.node;
  } catch {
    return undefined;
  }
}

/** Lines of `text` plus `lines` that are not there yet, after `comment`; unchanged when none is missing. */
function withLines(text, comment, lines) {
  const have = new Set(text.split('\n'));
  const missing = lines.filter((line) => !have.has(line));
  if (missing.length === 0) return text;
  const head = have.has(comment) ? [] : ['', comment];
  return `${text}${text && !text.endsWith('\n') ? '\n' : ''}${[...head, ...missing].join('\n')}\n`;
}

/**
 * An outputPath in the object form names the browser and server folders; the origin finds the
 * browser build beside its own bundle (server/ → ../browser), as Angular's defaults lay it out.
 * Returns the folders it had when they were not the defaults (and sets the defaults).
 */
function defaultFolders(outputPath) {
  if (typeof outputPath !== 'object' || outputPath === null) return undefined;
  const { browser = 'browser', server = 'server' } = outputPath;
  if (browser === 'browser' && server === 'server') return undefined;
  outputPath.browser = 'browser';
  outputPath.server = 'server';
  return `browser "${browser}", server "${server}"`;
}

/** What the deploy starts now, and on which Node: the one line every adopter needs to read. */
function deployLine(output, startsBuild) {
  const range = angularNodeRange();
  const others = [...startsBuild.map((script) => `\`npm run ${script}\``), 'a Dockerfile, CI'];
  return (
    `Deploy: \`npm run serve:ssr\` builds when stale and starts ${output}/server/server.mjs, now the origin, ` +
    `on the Node ${template.devDependencies.node} of the \`node\` dev dependency; whatever else starts that file ` +
    `(${others.join(', ')}) starts the origin on its own Node, which must be in Angular's range` +
    `${range ? ` ${range}` : ''} (the origin warns at startup when it is not).`
  );
}

/** @param {{ project?: string, bench?: boolean, engine?: 'common' | 'app', skipInstall?: boolean }} options */
function ngAdd(options) {
  return (tree, context) => {
    const { pkg, workspace, projectName, build, serverMain, sourceRoot, serverRoutes } = inspect(
      tree,
      options,
    );
    const config = engineConfig(tree, options);
    const log = [];
    let changed = 0;
    const write = (path, content) => {
      changed += 1;
      if (tree.exists(path)) tree.overwrite(path, content);
      else tree.create(path, content);
    };
    // The app keeps its build's place (the stock app's dist/<name>): whatever starts it finds it.
    const output = outputPathOf(workspace, projectName);
    /** A template script as this app runs it: the origin from the app's build. */
    const appScript = (script) =>
      template.scripts[script].replaceAll('dist/server/server.mjs', `${output}/server/server.mjs`);

    // 1. The origin's files, as the template has them; a file the app already has is left alone.
    const parts = partsFor(options);
    const files = filesFor(parts);
    const bringsCdn = !tree.exists(DEFAULT_VCL);
    for (const path of files) {
      if (tree.exists(path)) continue;
      write(path, readFileSync(join(TEMPLATE_ROOT, path)));
    }
    // default.vcl includes inputs.vcl, so varnishd needs one before the app's first build. An app
    // that adopts the origin declares no input yet (renderInputs() comes with it): the file for
    // none, as `npm run varnish:inputs` writes it for such an app, keys pages by their URL alone.
    if (!tree.exists(INPUTS_VCL)) write(INPUTS_VCL, vclForInputs([]));
    // The helpers the docs import (renderInputs, addCacheGroups), in the app's own src/app/.
    const appFiles = appFilesFor(parts, sourceRoot);
    const added = [];
    const addedHelpers = [];
    const kept = [];
    const purposes = new Map(appFilesOf(parts));
    for (const { from, path, to } of appFiles) {
      const content = readFileSync(join(TEMPLATE_ROOT, from));
      if (!tree.exists(to)) {
        write(to, content);
        addedHelpers.push(purposes.has(path) ? `${to}: ${purposes.get(path)}` : to);
      } else if (!tree.read(to).equals(content)) {
        kept.push(to);
      }
    }
    if (options.bench && !tree.exists('load-paths.json')) {
      const prerendered = prerenderedPage(tree.readText(serverRoutes));
      write('load-paths.json', userLoadPaths(prerendered ?? '/'));
      log.push(
        `load-paths.json names the pages the bench loads: ${prerendered ?? '/'} as the prerendered one (${prerendered ? `your server routes prerender it` : 'your server routes prerender no page without a parameter: name one'}); add a route rendered per request (docs/your-app.md#load-pathsjson-what-the-tools-load)`,
      );
    }
    // The bench installs its peers into bench/node_modules (bench/install.mjs), builds the stock
    // server into dist-bench/ and writes bench/results/: none of it is the app's source.
    const gitignore = tree.exists('.gitignore') ? tree.readText('.gitignore') : '';
    const ignored = options.bench
      ? withLines(gitignore, BENCH_IGNORED.comment, BENCH_IGNORED.lines)
      : gitignore;
    if (ignored !== gitignore) write('.gitignore', ignored);

    // The engine that renders when RENDER_ENGINE is unset: the first of server/config.ts's list.
    if (config.text !== config.wanted) {
      write(CONFIG_PATH, config.wanted);
      log.push(
        `pages render with RENDER_ENGINE=${config.engine} when it is unset (server/config.ts)`,
      );
    }

    // 2. Dependencies and scripts.
    pkg.dependencies ??= {};
    pkg.devDependencies ??= {};
    const code = [...files, ...appFiles.map(({ from }) => from)];
    for (const { name, section } of packagesFor(code, parts))
      addDependency(pkg[section], name, added);
    // Angular's packages at the exact versions the origin's patches are made and tested for (an
    // @angular/ssr that moves past its patch would install unpatched); the major was checked above.
    const pinned = [];
    for (const section of [pkg.dependencies, pkg.devDependencies]) {
      for (const name of Object.keys(section)) {
        const version = template.dependencies[name] ?? template.devDependencies[name];
        if (name.startsWith('@angular/') && version && section[name] !== version) {
          pinned.push(`${name} ${section[name]}`);
          section[name] = version;
        }
      }
    }
    if (pinned.length)
      log.push(
        `pinned to ${template.dependencies['@angular/core']}, the versions the patches are made for: ${pinned.join(', ')}`,
      );
    // Every patched package at the version of its patch, as a direct dependency so npm installs it
    // where patch-package patches (node_modules/<name>), whatever else in the app wants another
    // version (Express 5 wants content-type 2, Koa 1.0.5): postinstall checks it.
    for (const { name, version } of patchedPackages()) {
      if (name.startsWith('@angular/') || pkg.dependencies[name] === version) continue;
      log.push(
        `${name} ${pkg.dependencies[name] ?? pkg.devDependencies[name] ?? '(not listed)'} pinned to ${version}, the version its patch is for`,
      );
      delete pkg.devDependencies[name];
      pkg.dependencies[name] = version;
    }
    pkg.dependencies = sortKeys(pkg.dependencies);
    pkg.devDependencies = sortKeys(pkg.devDependencies);
    pkg.overrides = { ...template.overrides, ...pkg.overrides };
    pkg.scripts ??= {};
    // The parts' scripts but their tests', which run tests ng add does not bring.
    const scripts = scriptsOf(parts).filter((script) => !script.startsWith('test:'));
    for (const script of scripts) {
      if (pkg.scripts[script] !== appScript(script)) {
        if (pkg.scripts[script]) log.push(`script ${script} was "${pkg.scripts[script]}"`);
        pkg.scripts[script] = appScript(script);
        added.push(`script ${script}`);
      }
    }
    // `npm run build` writes what serve:ssr serves: the build and its compressed copies.
    const COMPRESS = 'node scripts/compress-build.mjs';
    if (!pkg.scripts.build?.includes(COMPRESS)) {
      const build = pkg.scripts.build ? `${pkg.scripts.build} && ${COMPRESS}` : appScript('build');
      log.push(
        `script build was ${pkg.scripts.build ? `"${pkg.scripts.build}"` : 'missing'}: now "${build}", so that it also writes the .br and .gz copies the origin serves`,
      );
      pkg.scripts.build = build;
    }
    // The app's own scripts that start its build's server bundle: the origin is that bundle now.
    const startsBuild = Object.entries(pkg.scripts)
      .filter(
        ([name, command]) =>
          !scripts.includes(name) && command.includes(`${output}/server/server.mjs`),
      )
      .map(([name]) => name);
    const pkgText = `${JSON.stringify(pkg, null, 2)}\n`;
    if (pkgText !== tree.read('package.json').toString('utf8')) write('package.json', pkgText);

    // 3. angular.json: the origin is the SSR entry, bundled separately with its packages external;
    // the build stays where the app had it (the scripts read it from here: scripts/lib/paths.mjs).
    const buildOptions = build.options;
    const previousEntry = buildOptions.ssr?.entry;
    const before = JSON.stringify(workspace);
    if (buildOptions.ssr?.entry && buildOptions.ssr.entry !== 'server/server.ts')
      log.push(`ssr.entry was ${buildOptions.ssr.entry}`);
    buildOptions.ssr = {
      ...(typeof buildOptions.ssr === 'object' ? buildOptions.ssr : {}),
      entry: 'server/server.ts',
    };
    const externals = new Set([
      ...(buildOptions.externalDependencies ?? []),
      ...templateBuild.options.externalDependencies,
    ]);
    buildOptions.externalDependencies = [...externals];
    for (const outputPath of [
      buildOptions.outputPath,
      ...Object.values(build.configurations ?? {}).map((configuration) => configuration.outputPath),
    ]) {
      const folders = defaultFolders(outputPath);
      if (folders)
        log.push(
          `outputPath's folders were ${folders}: now browser and server, where the origin finds them (it reads ../browser beside its bundle)`,
        );
    }
    if (!buildOptions.security?.allowedHosts?.length) {
      // CommonEngine rejects every host, localhost included, when the list is empty.
      buildOptions.security = {
        ...buildOptions.security,
        allowedHosts: ['localhost', '127.0.0.1'],
      };
      log.push(
        'security.allowedHosts was empty: localhost and 127.0.0.1 allowed; add your public hosts (docs/hosts-and-proxies.md)',
      );
    }
    if (options.bench) {
      const stock = templateBuild.configurations['bench-stock'];
      build.configurations = {
        ...build.configurations,
        'bench-stock': build.configurations?.['bench-stock'] ?? stock,
        // bench:locales: the app's own locales if it has them, else the bench's (bench/locale/).
        'bench-i18n':
          build.configurations?.['bench-i18n'] ?? templateBuild.configurations['bench-i18n'],
      };
      workspace.projects[projectName].i18n ??= Object.values(templateWorkspace.projects)[0].i18n;
    }
    if (JSON.stringify(workspace) !== before)
      write('angular.json', `${JSON.stringify(workspace, null, 2)}\n`);

    // 4. The app's TypeScript project type-checks the origin with it.
    const tsconfigPath = buildOptions.tsConfig ?? 'tsconfig.app.json';
    const tsconfig = tree.readText(tsconfigPath);
    const include = ['server/**/*.ts', 'server/**/*.d.mts'];
    const missing = include.filter((glob) => !tsconfig.includes(`"${glob}"`));
    let updated = tsconfig;
    if (missing.length) {
      updated = updated.replace(
        /("include"\s*:\s*\[)/,
        `$1\n    ${missing.map((glob) => JSON.stringify(glob)).join(',\n    ')},`,
      );
      if (updated === tsconfig)
        throw new SchematicsException(
          `Cannot add the origin: ${tsconfigPath} has no "include" list to add server/ to.`,
        );
    }
    // Files that import their own modules with the .ts extension (so that Node's type stripping
    // loads any of them as they are) type-check only where TypeScript emits nothing, as the Angular
    // build never does through it.
    const compilerOptions = ['allowImportingTsExtensions', 'noEmit'].filter(
      (option) => !new RegExp(`"${option}"\\s*:\\s*true`).test(updated),
    );
    if (files.some(importsTsExtension) && compilerOptions.length) {
      const before = updated;
      updated = updated.replace(
        /("compilerOptions"\s*:\s*\{)/,
        `$1\n    ${compilerOptions.map((option) => `"${option}": true`).join(',\n    ')},`,
      );
      if (updated === before)
        throw new SchematicsException(
          `Cannot add the origin: ${tsconfigPath} has no "compilerOptions" to allow .ts imports in.`,
        );
    }
    if (updated !== tsconfig) write(tsconfigPath, updated);

    // 5. The app's server main exports what the origin renders with.
    const main = tree.readText(serverMain);
    if (!/export\s*\{\s*CommonEngine\s*\}/.test(main)) {
      write(serverMain, `${main.trimEnd()}\n${ORIGIN_EXPORTS}`);
    } else if (!/\bREQUEST_CONTEXT\b/.test(main)) {
      // Added by an earlier origin: REQUEST (renders see their request), LOCALE_ID (each locale's
      // renders get their own) and REQUEST_CONTEXT (requestCookie() asks the origin by name) join
      // RESPONSE_INIT.
      write(
        serverMain,
        main.replace(
          /export \{ (?:LOCALE_ID, )?(?:REQUEST, )?RESPONSE_INIT \} from '@angular\/core';/,
          "export { LOCALE_ID, REQUEST, REQUEST_CONTEXT, RESPONSE_INIT } from '@angular/core';",
        ),
      );
    }

    // 6. The origin's manual, which its messages and comments name (docs/…): in the app, as it
    // applies there. A page the app already has under that name is its own and stays.
    const docs = docsFor(parts);
    const docSet = new Set(docs);
    const removedScripts = Object.keys(template.scripts).filter((script) => !pkg.scripts[script]);
    const addedDocs = [];
    for (const path of docs) {
      const text = adoptedDoc(path, {
        bench: Boolean(options.bench),
        removedScripts,
        output,
        exists: (target) => docSet.has(target) || tree.exists(target),
      });
      if (!tree.exists(path)) {
        write(path, text);
        addedDocs.push(path);
      } else if (tree.readText(path) !== text) {
        kept.push(path);
      }
    }

    if (!options.skipInstall && changed) {
      // With scripts: postinstall applies patches/ and the `node` package installs Node 24.
      context.addTask(new NodePackageInstallTask({ allowScripts: true }));
    }
    context.logger.info(
      changed
        ? [
            `The origin is now ${projectName}'s SSR entry (server/server.ts); \`npm run serve:ssr\` builds and starts it.`,
            ...(added.length ? [`Added: ${added.join(', ')}.`] : []),
            ...addedHelpers.map((helper) => `Added: ${helper}.`),
            ...(addedDocs.length
              ? [
                  `Added: the origin's manual in docs/ (${addedDocs.length} pages, as they apply to this app); start with docs/your-app.md.`,
                ]
              : []),
            ...log.map((line) => `Changed: ${line}.`),
            ...(kept.length
              ? [
                  `Kept as they are (yours differ from the origin's): ${kept.join(', ')}; the docs name the origin's.`,
                ]
              : []),
            deployLine(output, startsBuild),
            ...(bringsCdn ? cdnSteps() : []),
            `Pages render through ${ENGINE_NAMES[config.engine]}; RENDER_ENGINE=${config.other} renders through ${ENGINE_NAMES[config.other]} instead (same build, a restart).`,
            `Your routes and components are unchanged.${previousEntry && previousEntry !== 'server/server.ts' ? ` ${previousEntry} is no longer built: delete it when you no longer need it.` : ''}`,
          ].join('\n')
        : `Nothing to change: ${projectName} already runs on the origin.`,
    );
    return tree;
  };
}

module.exports = { ngAdd };
