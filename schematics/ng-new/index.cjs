'use strict';
// `ng new NAME --collection <this>`: a new workspace of this template under the user's name.
const { posix } = require('node:path');
const { SchematicsException } = require('@angular-devkit/schematics');
const {
  NodePackageInstallTask,
  RepositoryInitializerTask,
} = require('@angular-devkit/schematics/tasks');
const { scaffoldApp } = require('../template.cjs');

/** @param {{ name: string, directory?: string, skipInstall?: boolean, skipGit?: boolean, commit?: boolean | object, bench?: boolean, demo?: boolean, locales?: string }} options */
function ngNew(options) {
  return async (tree, context) => {
    let files;
    try {
      files = await scaffoldApp({
        name: options.name,
        bench: options.bench !== false,
        demo: options.demo !== false,
        locales: options.locales,
      });
    } catch (error) {
      throw new SchematicsException(error.message);
    }
    const directory = options.directory ?? options.name;
    if (tree.getDir(directory).subfiles.length + tree.getDir(directory).subdirs.length > 0) {
      throw new SchematicsException(`${directory}/ already exists and is not empty.`);
    }
    for (const [path, content] of files) {
      tree.create(posix.join(directory, path), content);
    }
    // As `ng new` does: install, then commit what the install produced (the lockfile included).
    // With scripts, unlike the task's default: postinstall applies patches/ and the `node` package
    // installs the Node 24 the npm scripts run on.
    const install = options.skipInstall
      ? []
      : [
          context.addTask(
            new NodePackageInstallTask({
              workingDirectory: directory,
              packageManager: 'npm',
              allowScripts: true,
            }),
          ),
        ];
    if (!options.skipGit) {
      const commit =
        options.commit === false ? false : typeof options.commit === 'object' ? options.commit : {};
      context.addTask(new RepositoryInitializerTask(directory, commit), install);
    }
    context.logger.info(
      `Created ${directory}/ from the SSR origin template (${options.demo === false ? 'no demo pages' : 'demo pages'}, ` +
        `${options.bench === false ? 'no bench' : 'bench'}${options.locales ? `, locales en-US and ${options.locales}` : ''}).`,
    );
    return tree;
  };
}

module.exports = { ngNew };
