import { join } from 'node:path';
import { createNodeRequestHandler, isMainModule } from '@angular/ssr/node';
import * as app from './main.server.mjs';
import { createCommonEnginePages } from './common-engine-pages';
import { ConfigError, readConfig, type OriginConfig } from './config';
import { createDevPages } from './dev-pages';
import type Koa from 'koa';
import { createOrigin } from './origin';

// Build layout: dist/server/server.mjs (this file), dist/server/main.server.mjs, dist/browser/.
const serverDir = import.meta.dirname;
const browserDir = join(serverDir, '../browser');

function loadConfig(): OriginConfig {
  try {
    return readConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}

/** The production origin: `node dist/server/server.mjs` (what `npm run serve:ssr` runs). */
function start(): void {
  const config = loadConfig();
  const origin = createOrigin({
    allowedHosts: config.allowedHosts,
    browserDir,
    renderPage: createCommonEnginePages({ app, browserDir, serverDir, allowedHosts: config.allowedHosts }),
  });
  const server = origin.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    console.log(`SSR origin listening on http://${config.host ?? 'localhost'}:${port}`);
  });
  server.on('error', (error: NodeJS.ErrnoException) => {
    console.error(`Cannot start: ${error.code === 'EADDRINUSE' ? `port ${config.port} is in use` : error.message}`);
    process.exit(1);
  });
}

if (isMainModule(import.meta.url) || process.env['pm_id']) {
  start();
}

/**
 * The handler `ng serve` (and the build, while prerendering) calls for requests it does not serve
 * itself: the same Koa chain, rendering through Angular's dev-aware engine. Created on first use
 * so that the production process never builds it.
 */
let devHandler: ReturnType<Koa['callback']> | undefined;
export const reqHandler = createNodeRequestHandler((req, res) => {
  devHandler ??= createOrigin({
    allowedHosts: loadConfig().allowedHosts,
    browserDir: undefined,
    renderPage: createDevPages(),
  }).callback();
  return devHandler(req, res);
});
