'use strict';
// The files `ng new` rewrote, formatted as the new app's own `npm test` checks them (its
// `prettier --check .`): a name longer than the template's pushes lines past the print width, and
// a fresh app must pass its own checks whatever it is called. Prettier reads its settings and
// ignore files from disk, so the new app's are written to a temporary folder for it to read.
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');

/** What Prettier's CLI reads besides the file: its settings, EditorConfig and both ignore files. */
const SETTINGS = ['.prettierrc', '.editorconfig', '.gitignore', '.prettierignore'];

/**
 * Formats `paths` of `files` (path → contents, changed in place) with the settings among `files`,
 * leaving alone what the app's Prettier ignores or has no parser for.
 * @param {Map<string, Buffer>} files @param {Iterable<string>} paths
 */
async function formatRewritten(files, paths) {
  const prettier = await import('prettier');
  const dir = mkdtempSync(join(tmpdir(), 'ng-new-format-'));
  try {
    for (const name of SETTINGS) {
      if (files.has(name)) writeFileSync(join(dir, name), files.get(name));
    }
    const ignorePath = ['.gitignore', '.prettierignore'].map((name) => join(dir, name));
    for (const path of paths) {
      const file = join(dir, path);
      const info = await prettier.getFileInfo(file, { ignorePath });
      if (info.ignored || !info.inferredParser) continue;
      // resolveConfig looks for settings from the file's folder upwards.
      mkdirSync(dirname(file), { recursive: true });
      const options = await prettier.resolveConfig(file, { editorconfig: true });
      const text = files.get(path).toString('utf8');
      const formatted = await prettier.format(text, { ...options, filepath: file });
      if (formatted !== text) files.set(path, Buffer.from(formatted));
    }
  } finally {
    await prettier.clearConfigCache();
    rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { formatRewritten };
