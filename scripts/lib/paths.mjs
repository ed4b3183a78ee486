// Where things are in the project, for the tools (bench/, scripts/) and the tests alike.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');

/**
 * Where the app's build goes, relative to the root, as angular.json says: the `outputPath` (its
 * `base`, in the object form) of the application at the workspace's root (`"root": ""`, or the
 * project named), in its default configuration, else Angular's default, `dist/<project>`. The
 * template's app builds into `dist`; an app that adopted the origin with `ng add` keeps its own
 * (`dist/my-store`), so that whatever starts its build (its scripts, a Dockerfile, CI) still finds it.
 * @param {{ projects?: Record<string, any> }} workspace angular.json's contents
 * @param {string} [name] the project; by default the application at the root
 */
export function outputPathOf(workspace, name) {
  const apps = Object.entries(workspace.projects ?? {}).filter(
    ([, project]) => project.projectType === 'application',
  );
  const [projectName, project] = (name === undefined
    ? (apps.find(([, candidate]) => (candidate.root ?? '') === '') ?? apps[0])
    : apps.find(([candidate]) => candidate === name)) ?? [undefined, undefined];
  if (!project) return 'dist';
  const build = project.architect?.build;
  const outputPath =
    build?.configurations?.[build.defaultConfiguration ?? 'production']?.outputPath ??
    build?.options?.outputPath;
  const base = typeof outputPath === 'object' ? outputPath?.base : outputPath;
  return (base ?? `dist/${projectName}`).replace(/\/+$/, '');
}

/** outputPathOf the workspace in `root` (dist when it has no angular.json). */
export function appOutputPath(root = ROOT) {
  let workspace;
  try {
    workspace = JSON.parse(readFileSync(join(root, 'angular.json'), 'utf8'));
  } catch {
    return 'dist';
  }
  return outputPathOf(workspace);
}

/** The app's own build (src/): what the tools measure. */
export const APP_DIST = join(ROOT, appOutputPath());
/** The build of the origin's tests' own app (test/app), so they pass whatever app is in src/. */
export const TEST_APP_DIST = join(ROOT, 'dist-test');
/** The same app built in its three locales (`ng build test-app --configuration localized`). */
export const TEST_APP_I18N_DIST = join(ROOT, 'dist-test-i18n');
