// Runs after patch-package on every install (postinstall): proves each patch in patches/ is applied
// to the version it was made for. patch-package alone warns and carries on when a package moved
// (`ng update`) or a patch failed, leaving a package silently unpatched that the README says is
// patched. Here that fails the install with the patch named and the command that fixes it.
// Usage: node scripts/check-patches.mjs [--apply] [root]  (default: this repository); --apply runs
// patch-package first, as postinstall does.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

/** Every patch adds a comment with this marker at its change (patches/README.md). */
const MARKER = 'Patched (patches/README.md)';

/**
 * `@angular+ssr+22.2.0.patch` → { name: '@angular/ssr', version: '22.2.0' }; undefined for a
 * name patch-package would not read. The one parser of these names: ng add (schematics/ng-add)
 * loads it from here, so it stays in this file, which imports nothing but Node's modules (the
 * Dockerfile copies it alone for postinstall, before anything else is in the image).
 */
export function parsePatchName(file) {
  const match = /^(.+)\+(\d[^+]*)\.patch$/.exec(file);
  return match ? { name: match[1].replaceAll('+', '/'), version: match[2] } : undefined;
}

/** What is wrong with each patch under `root`, as lines a person can act on. */
export function checkPatches(root) {
  const dir = join(root, 'patches');
  const problems = [];
  for (const file of existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.patch'))
        .sort()
    : []) {
    const parsed = parsePatchName(file);
    if (!parsed) {
      problems.push(`patches/${file}: not named <package>+<version>.patch`);
      continue;
    }
    const { name, version } = parsed;
    const manifest = join(root, 'node_modules', name, 'package.json');
    const installed = existsSync(manifest)
      ? JSON.parse(readFileSync(manifest, 'utf8')).version
      : undefined;
    const fix =
      `re-make it for ${name}@${installed}: apply the change by hand in node_modules/${name} (patches/README.md says what it does), ` +
      `then \`npx patch-package ${name}\` and delete patches/${file}; or drop it: \`rm patches/${file}\` (and its test in test/patches/)`;
    if (!installed) {
      problems.push(
        `patches/${file}: ${name} is not installed (remove the patch if the package is no longer used)`,
      );
    } else if (installed !== version) {
      problems.push(
        `patches/${file}: made for ${name}@${version}, but ${installed} is installed. To fix, ${fix}.`,
      );
    } else {
      // Each file the patch marks must carry the marker now.
      const text = readFileSync(join(dir, file), 'utf8');
      for (const section of text.split(/^diff --git /m).slice(1)) {
        const target = /^a\/(\S+)/.exec(section)?.[1];
        const addsMarker = section
          .split('\n')
          .some((line) => line.startsWith('+') && !line.startsWith('+++') && line.includes(MARKER));
        if (!target || !addsMarker) continue;
        const path = join(root, target);
        if (!existsSync(path) || !readFileSync(path, 'utf8').includes(MARKER)) {
          problems.push(
            `patches/${file}: not applied to ${target} (patch-package failed above). Run \`npx patch-package\` to see why; if ${name} changed, ${fix}.`,
          );
        }
      }
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const root = args.find((arg) => !arg.startsWith('--')) ?? join(import.meta.dirname, '..');
  if (args.includes('--apply')) {
    // Installed as a dependency (npx -p or ng add fetching the schematics collection): the patches
    // are for the app made from the template, not for this copy, and its packages are elsewhere.
    if (resolve(root).split(sep).includes('node_modules')) process.exit(0);
    const applied = spawnSync(join(root, 'node_modules/.bin/patch-package'), {
      cwd: root,
      stdio: 'inherit',
    });
    if (applied.status !== 0) process.exit(applied.status ?? 1);
  }
  const problems = checkPatches(root);
  if (problems.length > 0) {
    process.stderr.write(
      `\nPatches that are not in effect (the README's claims would be false):\n${problems.map((line) => `  - ${line}`).join('\n')}\n\n`,
    );
    process.exit(1);
  }
}
