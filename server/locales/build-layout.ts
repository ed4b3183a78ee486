// The build the origin serves, plain or localized, read from the build's own files: a plain build
// has one app at dist/server/main.server.mjs and its files in dist/browser/; a localized one
// (`"localize"` in angular.json) has one per locale, dist/server/<subPath>/ and
// dist/browser/<subPath>/, named by Angular's top-level angular-app-engine-manifest.mjs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AppServerBundle from '../main.server.mjs';
import { StartupError } from '../startup-error.ts';

/** Where one locale's build is: its files and its pages' place in the URL space. */
export interface LocaleDirs {
  /** Its locale (`fr`), or undefined for a build without locales. */
  locale: string | undefined;
  /** Its pages' URL prefix without the trailing slash (`/fr`), `` for a build without locales. */
  prefix: string;
  serverDir: string;
  browserDir: string;
}

/** One locale's build: where it is, and its app. */
export interface LocaleBuild extends LocaleDirs {
  app: typeof AppServerBundle;
}

/** The build's locales, the source locale first (Angular's manifest lists it first). */
export interface BuildDirs<Locale extends LocaleDirs = LocaleDirs> {
  locales: readonly Locale[];
  /** Where the locales live (`/`): the site root redirects from here to a locale. */
  basePath: string;
  localized: boolean;
}

/** The locales this process serves, with their apps, and every locale of the build. */
export interface BuildLayout extends BuildDirs<LocaleBuild> {
  /** Every locale of the build, served here or not (LOCALES): what alternates and the root name. */
  every: readonly LocaleDirs[];
}

/** What the build's angular-app-engine-manifest.mjs says of its locales. */
interface EngineManifest {
  basePath: string;
  supportedLocales: Record<string, string>;
}

/**
 * Reads where each locale of the build is, without importing any app: the manifest's entry points
 * are lazy. Also for the tests and tools that ask the build for its pages' addresses.
 */
export async function readBuildDirs(distDir: string): Promise<BuildDirs> {
  const serverDir = join(distDir, 'server');
  const browserDir = join(distDir, 'browser');
  if (existsSync(join(serverDir, 'main.server.mjs'))) {
    return {
      locales: [{ locale: undefined, prefix: '', serverDir, browserDir }],
      basePath: '/',
      localized: false,
    };
  }
  const manifestFile = join(serverDir, 'angular-app-engine-manifest.mjs');
  if (!existsSync(manifestFile)) {
    throw new StartupError(
      `${serverDir} holds neither main.server.mjs nor angular-app-engine-manifest.mjs: not an Angular server build`,
    );
  }
  const manifest = (
    (await import(
      // A file of the build, found at run time: nothing for Vite (ng serve) to analyze or warn about.
      /* @vite-ignore */ pathToFileURL(manifestFile).href
    )) as { default: EngineManifest }
  ).default;
  const basePath = manifest.basePath.endsWith('/') ? manifest.basePath : `${manifest.basePath}/`;
  const locales = Object.entries(manifest.supportedLocales).map(([locale, subPath]) => ({
    locale,
    prefix: `${basePath}${subPath}`.replace(/\/$/, ''),
    serverDir: join(serverDir, subPath),
    browserDir: join(browserDir, subPath),
  }));
  return { locales, basePath, localized: true };
}

/**
 * Reads the build's layout and imports the app bundle of each locale served: every locale, or
 * those `served` names (LOCALES). `plainApp` imports a plain build's bundle (server.ts's own
 * import, so that the build and `ng serve` resolve it).
 */
export async function readBuildLayout(
  distDir: string,
  plainApp: () => Promise<typeof AppServerBundle>,
  served?: readonly string[],
): Promise<BuildLayout> {
  const dirs = await readBuildDirs(distDir);
  const known = dirs.locales.map(({ locale }) => locale);
  if (served !== undefined && !dirs.localized) {
    throw new StartupError(
      'LOCALES is set, but the build has no locales (no "localize" in angular.json)',
    );
  }
  const unknown = served?.filter((locale) => !known.includes(locale)) ?? [];
  if (unknown.length > 0) {
    throw new StartupError(
      `LOCALES names ${unknown.join(', ')}, which the build has not: its locales are ${known.join(', ')}`,
    );
  }
  const serving = dirs.locales.filter(({ locale }) => served?.includes(locale!) ?? true);
  const locales = await Promise.all(
    serving.map(async (where) => ({
      ...where,
      app:
        where.locale === undefined
          ? await plainApp()
          : ((await import(
              /* @vite-ignore */ pathToFileURL(join(where.serverDir, 'main.server.mjs')).href
            )) as typeof AppServerBundle),
    })),
  );
  return { ...dirs, locales, every: dirs.locales };
}
