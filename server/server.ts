// The Angular build's ssr.entry. `node dist/server/server.mjs` (what `npm run serve:ssr` runs)
// reads the configuration, builds the origin's parts (parts.ts) and listens; under `ng serve`,
// reqHandler answers through the same Koa chain. The exported functions are for the app's own
// server code bundled with the origin.
import cluster from 'node:cluster';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { join } from 'node:path';
import { createNodeRequestHandler, isMainModule } from '@angular/ssr/node';
import { routeOwnApi } from './app-api/api-route.ts';
import { apiUrlGiven, defaultApiUrl } from './app-api/api-url.ts';
import { readConfig, type OriginConfig } from './config.ts';
import { createLogger } from './logger.ts';
import type { Tracing } from './observe/tracing/start-tracing.ts';
import { serveClusterMetrics, serveOwnMetrics } from './metrics/process-metrics.ts';
import { type PageHints, readPageHints } from './hints/page-hints.ts';
import { type BuildLayout, readBuildLayout } from './locales/build-layout.ts';
import { hintsByLocale } from './hints/locale-hints.ts';
import { createRouteLookup } from './pages/route-matcher.ts';
import { routeConsoleToLog } from './pages/render-console.ts';
import { appApi, createDevListener, createParts, type Parts } from './parts.ts';
import { CANNOT_START, createPrimary, runsPrimary } from './process/cluster.ts';
import { workerSlot } from './process/worker.ts';
import { nodeRangeWarning } from './process/node-range.ts';
import { type ApiListener, openApiListener, withApiListener } from './process/api-listener.ts';
import { serveUntilStopped } from './process/lifecycle.ts';
import { createPublicServer, type PublicServer } from './process/public-server.ts';
import { limitBelowStartingSize, recycleWhenDue } from './process/recycling.ts';
import { checkedRevalidation } from './revalidation/request.ts';
import type { RevalidationReport } from './revalidation/revalidator.ts';
import type { RevalidationMode } from './cache/revalidation.ts';
import { StartupError } from './startup-error.ts';
import { messageOf, report } from './errors.ts';

// Build layout: dist/server/server.mjs (this file), dist/server/main.server.mjs (or one per locale,
// dist/server/<locale>/main.server.mjs), dist/browser/ (or dist/browser/<locale>/).
const serverDir = import.meta.dirname;
const browserDir = join(serverDir, '../browser');
/** The app's bundle, imported at run time: a localized build has none here, but one per locale. */
const plainApp = () => import('./main.server.mjs');

/**
 * Startup failures are one plain line on stderr: read by a person, not a log collector. A cluster
 * worker exits with CANNOT_START so that the primary stops instead of restarting it.
 */
function cannotStart(reason: string): never {
  process.stderr.write(`${messageOf('ORIGIN_CANNOT_START', reason)}\n`);
  process.exit(cluster.isWorker ? CANNOT_START : 1);
}

/** A StartupError (a setting, a route's declaration, the build) stops the start in one line. */
function stopOnStartupError(error: unknown): never {
  if (error instanceof StartupError) {
    cannotStart(error.message);
  }
  throw error;
}

/** Runs a step of the start, stopping it on a StartupError. */
function orStop<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    stopOnStartupError(error);
  }
}

function loadConfig(): OriginConfig {
  return orStop(() => readConfig(process.env));
}

/** Each locale's page hints from its own manifests, or the plain build's. */
async function readHints(layout: BuildLayout): Promise<PageHints> {
  if (!layout.localized) {
    return readPageHints(browserDir, serverDir);
  }
  const sites = await Promise.all(
    layout.locales.map(async ({ prefix, browserDir, serverDir }) => ({
      prefix,
      hints: await readPageHints(browserDir, serverDir),
    })),
  );
  return hintsByLocale(sites);
}

/**
 * The production origin. A cluster primary only supervises its workers (and serves their summed
 * metrics); a single process or a worker builds the parts and listens. Returns the parts of a
 * serving process.
 */
async function start(): Promise<Parts | undefined> {
  const config = loadConfig();
  const log = createLogger(config.log.level);
  // Once per start (a cluster's primary, not each worker): a Node outside Angular's own range,
  // which nothing else checks when the bundle is started by hand, an image or a process manager.
  const outsideRange = cluster.isWorker ? undefined : nodeRangeWarning();
  if (outsideRange) {
    report(log, 'ORIGIN_NODE_OUT_OF_RANGE', { node: process.version }, outsideRange);
  }
  if (runsPrimary(config.processes) && cluster.isPrimary) {
    const primary = createPrimary(config.processes, log);
    // The endpoint binds first: a taken METRICS_PORT stops the start before any worker exists.
    if (config.metrics) {
      serveClusterMetrics(
        config.metrics,
        () => primary.stats,
        log,
        () => primary.start(),
        cannotStart,
      );
    } else {
      primary.start();
    }
    return undefined;
  }
  routeConsoleToLog(log);
  // CommonEngine would install process handlers that only log uncaught errors and keep the process
  // limping on; serveUntilStopped installs ours, which log and exit so a supervisor restarts us.
  (
    globalThis as { ngAttachNodeGlobalErrorHandlersCalled?: boolean }
  ).ngAttachNodeGlobalErrorHandlersCalled = true;
  const layout = await readBuildLayout(join(serverDir, '..'), plainApp, config.locales).catch(
    stopOnStartupError,
  );
  const hints = await readHints(layout);
  // Before anything is built: the tracer listens on the origin's channels from the first request.
  const tracing = config.tracing && (await traceWith(config, log));
  const parts = orStop(() =>
    createParts(config, { layout, serverDir, browserDir, hints }, log, tracing),
  );
  const hasApi = appApi(layout) !== undefined;
  // Renders reach the app's own API on a listener of this process's own, when it is the origin's.
  const apiListener =
    hasApi && !apiUrlGiven(process.env)
      ? await openApiListener(parts.listener).catch((error: Error) =>
          cannotStart(`the app API's loopback listener (127.0.0.1): ${error.message}`),
        )
      : undefined;
  listen(parts, config, log, { tracing, hasApi, apiListener });
  // A cluster worker's metrics are served by its primary.
  if (config.metrics && !cluster.isWorker) {
    serveOwnMetrics(config.metrics, log, cannotStart);
  }
  return parts;
}

/**
 * OpenTelemetry's SDK, loaded only now (its module and packages cost nothing otherwise), exporting
 * what the origin's channels trace.
 */
async function traceWith(config: OriginConfig, log: Logger): Promise<Tracing> {
  const { startTracing } = await import('./observe/tracing/start-tracing.ts');
  return startTracing(config.tracing!, { engine: config.engine.name, log });
}

/** What `listen` serves with besides the parts. */
interface ListenOptions {
  tracing: Tracing | undefined;
  /** The app's bundle exports an `api`. */
  hasApi: boolean;
  /** Where renders reach that API when API_URL is the origin's own (process/api-listener.ts). */
  apiListener: ApiListener | undefined;
}

/**
 * Serves the parts on the public port until the process is told to stop. With an app API, API_URL
 * names this process's own address unless it is set (app-api/api-url.ts), and renders' requests
 * for it go to `apiListener` (app-api/api-route.ts), which closes once the public port drained.
 */
function listen(
  parts: Parts,
  config: OriginConfig,
  log: Logger,
  { tracing, hasApi, apiListener }: ListenOptions,
): void {
  const { port, host, tls } = config.listen;
  let publicServer: PublicServer;
  try {
    publicServer = createPublicServer(parts.listener, tls);
  } catch (error) {
    // Node's own words (e.g. "key values mismatch"), after the variables that set them.
    cannotStart(`TLS_CERT and TLS_KEY: ${(error as Error).message}`);
  }
  const { server, scheme } = publicServer;
  const { recycle } = config.processes;
  // Measured once everything is built, before the primary can hand this worker a connection.
  const tooLow = recycle && limitBelowStartingSize(recycle);
  if (tooLow) {
    cannotStart(tooLow);
  }
  server.listen(port, host, () => {
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    const url = `${scheme}://${host ?? 'localhost'}:${bound}`;
    const api =
      hasApi && typeof address === 'object' && address
        ? defaultApiUrl(process.env, { scheme, address: address.address, port: bound })
        : undefined;
    // Set with API_URL, before the first request: every render's fetches take the private way.
    if (api && apiListener) {
      routeOwnApi(api, apiListener.url);
    }
    log.info(
      { url, http2: scheme === 'https', api, apiVia: api && apiListener?.url },
      `Origin listening on ${url}`,
    );
  });
  server.on('error', (error: NodeJS.ErrnoException) =>
    cannotStart(error.code === 'EADDRINUSE' ? `port ${port} is in use` : error.message),
  );
  const serving = serveUntilStopped(withApiListener(publicServer, apiListener), {
    readiness: parts.readiness,
    log,
    windowMs: config.processes.drainWindowMs,
    graceMs: config.processes.shutdownGraceMs,
    // The spans of the last requests go out before the process does.
    beforeExit: tracing && (() => tracing.shutdown()),
    onHangup: () => {
      const entries = parts.renderCache?.stats.entries ?? 0;
      parts.renderCache?.clear();
      log.info({ entries }, 'SIGHUP: render cache emptied');
    },
  });
  // Only the origin's own primary can start a replacement first (not PM2's, nor none).
  if (recycle && workerSlot() !== undefined) {
    recycleWhenDue(server, { limits: recycle, retire: serving.retire, log });
  }
}

/** This process's parts when it serves (run as the entry point, or under PM2); set once. */
const serving = isMainModule(import.meta.url) || process.env['pm_id'] ? await start() : undefined;

/**
 * Drops the render cache's pages for `path` (`/products/42`), or for every path under it when it
 * ends with `/` (`/products/`). For the app's own server code, e.g. after content changed; returns
 * how many pages were dropped. `SIGHUP` drops every page. Each process has its own cache.
 */
export function purgeRenderCache(path: string): number {
  return serving?.renderCache?.purge(path) ?? 0;
}

/**
 * Revalidates cached pages on demand, by exact path and by cache group (the `Cache-Groups` a page
 * declared), in this process and in every other one the channels reach (the cluster's workers),
 * and at the CDN when a purge hook is configured: what `POST /_origin/revalidate` does, for the
 * app's own server code. `soft` (the default) serves the old page once more while one render
 * refreshes it; `hard` deletes it. Rejects with a TypeError naming what is wrong with `request`.
 * Outside the production origin (under `ng serve`) there is nothing to revalidate: it reports 0.
 */
export async function revalidate(request: {
  paths?: string[];
  groups?: string[];
  mode?: RevalidationMode;
}): Promise<RevalidationReport> {
  const checked = checkedRevalidation(request);
  if (serving === undefined) {
    return { id: '', ...checked, affected: 0, dataOfPaths: 0, channels: [], cdn: null };
  }
  return serving.revalidator.revalidate(checked);
}

/**
 * The handler `ng serve` (and the build, while prerendering) calls for requests it does not serve
 * itself: the same Koa chain, rendering through Angular's dev-aware engine. Created on first use
 * so that the production process never builds it.
 */
let devHandler: Promise<RequestListener> | undefined;
export const reqHandler = createNodeRequestHandler(async (req, res) => {
  devHandler ??= plainApp().then((app) => {
    const config = loadConfig();
    const log = createLogger(config.log.level);
    const api = typeof app.api === 'function' ? app.api : undefined;
    // The dev server's own address, as the production origin says its own once it listens.
    if (api) {
      defaultApiUrl(process.env, {
        scheme: 'encrypted' in req.socket ? 'https' : 'http',
        address: req.socket.localAddress ?? '',
        port: req.socket.localPort ?? 4200,
      });
    }
    return createDevListener(
      config,
      { lookupRoute: orStop(() => createRouteLookup(app.serverRoutes, log)), api, app },
      log,
    );
  });
  return (await devHandler)(req, res);
});
