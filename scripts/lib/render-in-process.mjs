// Renders pages in this process with the app's own server bundle (dist/server/main.server.mjs),
// where Angular core and platform-server are compiled in.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { APP_DIST as DIST } from './paths.mjs';

const app = await import(pathToFileURL(join(DIST, 'server/main.server.mjs')).href);
const engine = new app.CommonEngine({ allowedHosts: ['localhost'] });

/**
 * Renders `path` as the origin does, without critical CSS.
 * @returns {Promise<{ status: number, html: string }>}
 */
export async function renderInProcess(path) {
  const responseInit = {};
  const html = await engine.render({
    bootstrap: app.default,
    documentFilePath: join(DIST, 'server/index.server.html'),
    publicPath: join(DIST, 'browser'),
    url: `http://localhost${path}`,
    providers: [{ provide: app.RESPONSE_INIT, useValue: responseInit }],
    inlineCriticalCss: false,
  });
  return { status: responseInit.status ?? 200, html };
}
