import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RenderMode } from '@angular/ssr';
import type { Middleware } from 'koa';
import type * as AppServerBundle from './main.server.mjs';
import { createRouteLookup } from './render-modes';

export interface CommonEnginePagesOptions {
  /** The app's server bundle (dist/server/main.server.mjs): bootstrap, engine and tokens. */
  app: typeof AppServerBundle;
  browserDir: string;
  serverDir: string;
  allowedHosts: readonly string[];
}

const HTML = 'text/html; charset=utf-8';

/**
 * Renders pages with CommonEngine in production. Each route's render mode comes from the app's
 * server routes: client-only routes get the client-side shell, the rest are rendered (CommonEngine
 * itself answers prerendered routes from their files).
 */
export function createCommonEnginePages(options: CommonEnginePagesOptions): Middleware {
  const { app, browserDir, serverDir } = options;
  const engine = new app.CommonEngine({ allowedHosts: [...options.allowedHosts] });
  const documentFilePath = join(serverDir, 'index.server.html');
  const lookupRoute = createRouteLookup(app.serverRoutes);
  // Read once: the build never changes under a running server.
  const clientShell = readFileSync(join(browserDir, 'index.csr.html'));

  return async (ctx) => {
    const route = lookupRoute(ctx.path);
    ctx.set('Content-Type', HTML);

    if (route.renderMode === RenderMode.Client) {
      ctx.status = route.status ?? 200;
      ctx.body = clientShell;
      return;
    }

    // The app may set the status (a 404 page does) through RESPONSE_INIT while it renders.
    const responseInit: ResponseInit = { status: route.status, headers: route.headers };
    const html = await engine.render({
      bootstrap: app.default,
      documentFilePath,
      publicPath: browserDir,
      // Built from the validated Host header and the path only: never from an absolute-form target.
      url: `${ctx.protocol}://${ctx.host}${ctx.path}${ctx.search}`,
      providers: [{ provide: app.RESPONSE_INIT, useValue: responseInit }],
    });
    ctx.status = responseInit.status ?? 200;
    for (const [name, value] of new Headers(responseInit.headers)) {
      ctx.set(name, value);
    }
    ctx.body = html;
  };
}
