// "Build B" for the deploy tests: a copy of a build whose every hashed file has another name, each
// reference to it rewritten (in the browser files, the server bundle and its manifests), and its
// compressed copies made again. Not a second `ng build`: that takes a minute and changes only
// what this does — the hashed names, which are what a rolling deploy loses — so the tests stay
// quick and cannot pass because two builds happened to share a chunk.
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { compressBuild } from '../../server/files/compress-build.ts';

const HASHED = /^(.+-)([A-Za-z0-9_-]{8})(\.(?:js|mjs|css))$/;
const TEXT = /\.(?:js|mjs|css|html|json|txt)$/;

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/**
 * Copies `from` to `to` as the next build. Returns the renames (old name → new name, relative to
 * browser/: `en-US/chunk-….js` in a localized build) of the hashed browser files: the files a page
 * of `from` asks for that `to` does not have.
 * @returns {Promise<Map<string, string>>}
 */
export async function nextBuild(from, to) {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
  const browser = join(to, 'browser');
  const renames = new Map();
  /** The same renames by file name: what the files refer to, relative to their base href. */
  const renamedFiles = new Map();
  for (const path of files(browser)) {
    const name = relative(browser, path);
    const file = basename(name);
    const match = HASHED.exec(file);
    if (/\.(?:br|gz)$/.test(name)) {
      rmSync(path);
    } else if (match) {
      // Another hash of the same length and alphabet: the first character moved to the end.
      const hash =
        match[2].slice(1) + match[2][0] === match[2] ? 'Bbbbbbbb' : match[2].slice(1) + match[2][0];
      const renamed = `${match[1]}${hash}${match[3]}`;
      renames.set(name, `${name.slice(0, -file.length)}${renamed}`);
      renamedFiles.set(file, renamed);
    }
  }
  for (const [name, renamed] of renames) {
    // Files are rewritten by file name: no new name may be one the build has (in any locale).
    if (renamedFiles.has(basename(renamed)))
      throw new Error(`renaming ${name} would take ${renamed}`);
    renameSync(join(browser, name), join(browser, renamed));
  }
  for (const path of files(to)) {
    if (!TEXT.test(path)) continue;
    const text = readFileSync(path, 'utf8');
    let changed = text;
    for (const [name, renamed] of renamedFiles) changed = changed.replaceAll(name, renamed);
    if (changed !== text) writeFileSync(path, changed);
  }
  await compressBuild(browser);
  return renames;
}
