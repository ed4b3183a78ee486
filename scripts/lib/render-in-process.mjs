// Renders pages in this process with the app's own server bundle (dist/server/main.server.mjs, or
// in a localized build the bundle of the locale a path is under), where Angular core and
// platform-server are compiled in.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { siteOf } from '../../server/locales/locale-sites.ts';
import { APP_DIST as DIST } from './paths.mjs';

const { locales } = await readBuildDirs(DIST);
/** Each locale's app and engine, imported when a path first asks for it. */
const loaded = new Map();

async function appOf(site) {
  if (!loaded.has(site)) {
    const app = await import(pathToFileURL(join(site.serverDir, 'main.server.mjs')).href);
    loaded.set(site, { app, engine: new app.CommonEngine({ allowedHosts: ['localhost'] }) });
  }
  return loaded.get(site);
}

/**
 * Renders `path` as the origin does, without critical CSS.
 * @returns {Promise<{ status: number, html: string }>}
 */
export async function renderInProcess(path) {
  const site = siteOf(locales, path) ?? locales[0];
  const { app, engine } = await appOf(site);
  const responseInit = {};
  const html = await engine.render({
    bootstrap: app.default,
    documentFilePath: join(site.serverDir, 'index.server.html'),
    publicPath: site.browserDir,
    url: `http://localhost${path}`,
    providers: [
      { provide: app.RESPONSE_INIT, useValue: responseInit },
      // The URL's locale, as the origin provides it (each locale's bundle exports the token).
      ...(site.locale === undefined ? [] : [{ provide: app.LOCALE_ID, useValue: site.locale }]),
    ],
    inlineCriticalCss: false,
  });
  return { status: responseInit.status ?? 200, html };
}
