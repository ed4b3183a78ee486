// The build the origin serves, plain or localized, read from the build's own files: a plain build
// has one app at dist/server/main.server.mjs and its files in dist/browser/; a localized one
// (`"localize"` in angular.json) has one per locale, dist/server/<subPath>/ and
// dist/browser/<subPath>/, named by Angular's top-level angular-app-engine-manifest.mjs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AppServerBundle from '../main.server.mjs';
import { StartupError } from '../startup-error.ts';

/** One locale's build: its app, its files and where its pages live. */
export interface LocaleBuild {
  /** Its locale (`fr`), or undefined for a build without locales. */
  locale: string | undefined;
  /** Its pages' URL prefix without the trailing slash (`/fr`), `` for a build without locales. */
  prefix: string;
  serverDir: string;
  browserDir: string;
  app: typeof AppServerBundle;
}

export interface BuildLayout {
  /** Every locale's build, the source locale first (Angular's manifest lists it first). */
  locales: readonly LocaleBuild[];
  /** Where the locales live (`/`): the site root redirects from here to a locale. */
  basePath: string;
  localized: boolean;
}

/** What the build's angular-app-engine-manifest.mjs says of its locales. */
interface EngineManifest {
  basePath: string;
  supportedLocales: Record<string, string>;
}

/**
 * Reads the build's layout and imports each locale's app bundle. `plainApp` imports a plain
 * build's bundle (server.ts's own import, so that the build and `ng serve` resolve it).
 */
export async function readBuildLayout(
  distDir: string,
  plainApp: () => Promise<typeof AppServerBundle>,
): Promise<BuildLayout> {
  const serverDir = join(distDir, 'server');
  const browserDir = join(distDir, 'browser');
  if (existsSync(join(serverDir, 'main.server.mjs'))) {
    const app = await plainApp();
    return {
      locales: [{ locale: undefined, prefix: '', serverDir, browserDir, app }],
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
  const manifest = ((await import(pathToFileURL(manifestFile).href)) as { default: EngineManifest })
    .default;
  const basePath = manifest.basePath.endsWith('/') ? manifest.basePath : `${manifest.basePath}/`;
  const locales = await Promise.all(
    Object.entries(manifest.supportedLocales).map(async ([locale, subPath]) => {
      const localeServerDir = join(serverDir, subPath);
      const app = (await import(
        pathToFileURL(join(localeServerDir, 'main.server.mjs')).href
      )) as typeof AppServerBundle;
      return {
        locale,
        prefix: `${basePath}${subPath}`.replace(/\/$/, ''),
        serverDir: localeServerDir,
        browserDir: join(browserDir, subPath),
        app,
      };
    }),
  );
  return { locales, basePath, localized: true };
}
