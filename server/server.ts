import cluster from 'node:cluster';
import { createServer, type RequestListener } from 'node:http';
import { join } from 'node:path';
import { createNodeRequestHandler, isMainModule } from '@angular/ssr/node';
import * as app from './main.server.mjs';
import { ConfigError, readConfig, type OriginConfig } from './config.ts';
import { ContentSecurityPolicy } from './csp/policy.ts';
import { buildStaticIndex, readPrerenderedRoutes } from './files/static-index.ts';
import { createLogger } from './logger.ts';
import { recordMetrics, serveClusterMetrics, serveOwnMetrics } from './metrics/process-metrics.ts';
import { createOrigin } from './origin.ts';
import { createAppEngine } from './pages/app-engine.ts';
import { createCommonEngine, readClientShell } from './pages/common-engine.ts';
import { createDevPages } from './pages/dev-pages.ts';
import { pages } from './pages/pages.ts';
import { routeConsoleToLog } from './pages/render-console.ts';
import { RenderLimiter } from './pages/render-limiter.ts';
import { Renderer } from './pages/renderer.ts';
import { createRouteLookup } from './pages/route-matcher.ts';
import { CANNOT_START, runPrimary } from './process/cluster.ts';
import { serveUntilStopped } from './process/lifecycle.ts';
import { buildId } from './render-cache/build-id.ts';
import { CachedPages } from './render-cache/cached-pages.ts';
import { SharedTier } from './render-cache/shared-tier.ts';
import { RenderCache } from './render-cache/store.ts';
import { createCdnPurge } from './revalidation/cdn-purge.ts';
import { clusterChannel } from './revalidation/cluster-channel.ts';
import { revalidateEndpoint } from './revalidation/endpoint.ts';
import { redisChannel } from './revalidation/redis-channel.ts';
import {
  parseRevalidationRequest,
  type RevalidationMode,
  type RevalidationRequest,
} from './revalidation/request.ts';
import { type RevalidationReport, Revalidator } from './revalidation/revalidator.ts';

// Build layout: dist/server/server.mjs (this file), dist/server/main.server.mjs, dist/browser/.
const serverDir = import.meta.dirname;
const browserDir = join(serverDir, '../browser');

/**
 * Startup failures are one plain line on stderr: read by a person, not a log collector. A cluster
 * worker exits with CANNOT_START so that the primary stops instead of restarting it.
 */
function cannotStart(reason: string): never {
  process.stderr.write(`Cannot start: ${reason}\n`);
  process.exit(cluster.isWorker ? CANNOT_START : 1);
}

function loadConfig(): OriginConfig {
  try {
    return readConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      cannotStart(error.message);
    }
    throw error;
  }
}

let renderCache: RenderCache | undefined;

/**
 * Drops the render cache's pages for `path` (`/products/42`), or for every path under it when it
 * ends with `/` (`/products/`). For the app's own server code, e.g. after content changed; returns
 * how many pages were dropped. `SIGHUP` drops every page. Each process has its own cache.
 */
export function purgeRenderCache(path: string): number {
  return renderCache?.purge(path) ?? 0;
}

let revalidator: Revalidator | undefined;

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
  const parsed = parseRevalidationRequest(request);
  if ('error' in parsed) {
    throw new TypeError(`revalidate: ${parsed.error}`);
  }
  if (revalidator === undefined) {
    return { id: '', ...parsed.request, affected: 0, channels: [], cdn: null };
  }
  return revalidator.revalidate(parsed.request);
}

/** The production origin: `node dist/server/server.mjs` (what `npm run serve:ssr` runs). */
function start(): void {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const metricsAddress =
    config.metricsPort === undefined
      ? undefined
      : { port: config.metricsPort, host: config.metricsHost };
  if (config.workers > 1 && cluster.isPrimary) {
    const supervise = () => runPrimary(config.workers, config.shutdownGraceMs, log);
    // The endpoint binds first: a taken METRICS_PORT stops the start before any worker exists.
    if (metricsAddress) {
      serveClusterMetrics(metricsAddress, log, supervise, cannotStart);
    } else {
      supervise();
    }
    return;
  }
  routeConsoleToLog(log);
  // CommonEngine would install process handlers that only log uncaught errors and keep the process
  // limping on; serveUntilStopped installs ours, which log and exit so a supervisor restarts us.
  (
    globalThis as { ngAttachNodeGlobalErrorHandlersCalled?: boolean }
  ).ngAttachNodeGlobalErrorHandlersCalled = true;
  const readiness = { ready: true };
  // One policy (and nonce placeholder) per process; every HTML answer gets its own nonce.
  const csp =
    config.csp === 'off'
      ? undefined
      : new ContentSecurityPolicy(config.csp, config.cspDirectives, config.cspReportTo);
  const limiter = new RenderLimiter(config.maxConcurrentRenders, config.renderQueueLimit);
  // Only the chosen engine is constructed: the other costs nothing, not even its startup work.
  const engine =
    config.renderEngine === 'app'
      ? createAppEngine(config)
      : createCommonEngine({ app, browserDir, serverDir, ...config, csp });
  const renderer = new Renderer(engine, limiter, log);
  const lookupRoute = createRouteLookup(app.serverRoutes, log);
  renderCache =
    config.renderCacheBytes > 0
      ? new RenderCache(config.renderCacheBytes, { admission: config.renderCacheAdmission })
      : undefined;
  // With REDIS_URL, a miss here asks the tier every process of every replica shares.
  const build = buildId(browserDir, serverDir);
  const shared =
    renderCache && config.sharedCache
      ? new SharedTier({ ...config.sharedCache, buildId: build, csp, log })
      : undefined;
  const cachedPages =
    renderCache &&
    new CachedPages({ cache: renderCache, renderer, lookupRoute, log, ...config, csp, shared });
  const revalidation = new Revalidator({
    cache: renderCache,
    // The cluster's IPC reaches this pod's other workers even while Redis is down; Redis reaches
    // every process of every replica (a message heard on both is applied once).
    channels: [
      ...(config.workers > 1 && cluster.isWorker ? [clusterChannel()] : []),
      ...(shared ? [redisChannel({ shared, buildId: build, log })] : []),
    ],
    cdnPurge: config.cdnPurge && createCdnPurge(config.cdnPurge, log),
    log,
  });
  revalidator = revalidation;
  const index = buildStaticIndex(
    browserDir,
    readPrerenderedRoutes(join(serverDir, '../prerendered-routes.json')),
    {
      maxTotalBytes: config.staticMemoryBytes,
      csp,
    },
  );
  // What /healthz reports, and what the metrics read: one source for both.
  const stats = () => ({
    pid: process.pid,
    worker: cluster.worker?.id,
    workers: config.workers,
    engine: config.renderEngine,
    renders: { started: renderer.started, ...limiter.stats },
    renderCache: renderCache?.stats,
    sharedCache: shared?.stats,
    revalidations: revalidation.stats,
  });
  const timings = metricsAddress && recordMetrics(stats);
  renderer.renderEnded = timings?.renderEnded;
  const listener = createOrigin({
    allowedHosts: config.allowedHosts,
    trustProxy: config.trustProxy,
    files: { browserDir, index },
    pages: pages({
      renderer,
      lookupRoute,
      clientShell: readClientShell(browserDir),
      cachedPages,
      log,
      ...config,
      csp,
    }),
    cachedPages,
    csp,
    readiness,
    revalidateEndpoint:
      config.revalidateToken === undefined
        ? undefined
        : revalidateEndpoint(config.revalidateToken, (request: RevalidationRequest) =>
            revalidation.revalidate(request),
          ),
    stats,
    log,
    accessLog: config.accessLog,
    fastPath: config.fastPath,
    timeResponse: timings?.timeResponse,
  });
  const server = createServer(listener);
  // `Expect: 100-continue`: no route reads a request body, so the final answer (405 for a POST)
  // goes out instead of Node's automatic 100 Continue, which invited the client to upload it.
  server.on('checkContinue', listener);
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host ?? 'localhost'}:${port}`;
    log.info({ url }, `Origin listening on ${url}`);
  });
  // A cluster worker's metrics are served by its primary.
  if (metricsAddress && !cluster.isWorker) {
    serveOwnMetrics(metricsAddress, log, cannotStart);
  }
  // Slow or stalled clients must not hold connections open forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.on('error', (error: NodeJS.ErrnoException) =>
    cannotStart(error.code === 'EADDRINUSE' ? `port ${config.port} is in use` : error.message),
  );
  serveUntilStopped(server, {
    readiness,
    log,
    graceMs: config.shutdownGraceMs,
    onHangup: () => {
      const entries = renderCache?.stats.entries ?? 0;
      renderCache?.clear();
      log.info({ entries }, 'SIGHUP: render cache emptied');
    },
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
let devHandler: RequestListener | undefined;
export const reqHandler = createNodeRequestHandler((req, res) => {
  if (!devHandler) {
    const config = loadConfig();
    const log = createLogger(config.logLevel);
    devHandler = createOrigin({
      allowedHosts: config.allowedHosts,
      trustProxy: config.trustProxy,
      files: undefined,
      pages: createDevPages(log),
      cachedPages: undefined,
      readiness: { ready: true },
      stats: () => ({ pid: process.pid }),
      log,
      accessLog: config.accessLog,
      fastPath: false,
    });
  }
  return devHandler(req, res);
});
