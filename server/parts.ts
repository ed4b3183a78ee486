// The origin's parts, built from its configuration once at startup: the engine and its limits, the
// files, the caches, revalidation, metrics, and the request listener that uses them. Nothing here
// listens or reads the environment; server.ts does both.
import cluster from 'node:cluster';
import type { RequestListener } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ownApiFetch } from './app-api/api-route.ts';
import type { AppApi } from './app-api/api-step.ts';
import type { OriginConfig } from './config.ts';
import { ContentSecurityPolicy } from './csp/policy.ts';
import type { AssetArchive } from './files/asset-archive.ts';
import { DirectoryArchive } from './files/directory-archive.ts';
import { publishInBackground } from './files/earlier-builds.ts';
import { RedisArchive } from './files/redis-archive.ts';
import { buildStaticIndex, readPrerenderedRoutes } from './files/static-index.ts';
import type { PageHints } from './hints/page-hints.ts';
import type { BuildLayout, LocaleBuild } from './locales/build-layout.ts';
import {
  languageHeaders,
  type LocaleMap,
  pageLanguage,
  pathInSite,
  siteOf,
} from './locales/locale-sites.ts';
import { recordMetrics } from './metrics/process-metrics.ts';
import { logRequests } from './observe/access-log.ts';
import { errorCounts } from './observe/error-counts.ts';
import { timeAnswers } from './observe/server-timing.ts';
import type { TracingStats } from './observe/tracing/start-tracing.ts';
import { createOrigin } from './origin.ts';
import { createAppEngine } from './pages/app-engine.ts';
import { createCommonEngine, readClientShell } from './pages/common-engine.ts';
import { localizedPages } from './pages/localized-pages.ts';
import { withLanguageHeaders } from './pages/page-language.ts';
import { createPages, type Pages } from './pages/pages.ts';
import { RenderLimiter } from './pages/render-limiter.ts';
import type { PageEngine } from './pages/engine.ts';
import { Renderer } from './pages/renderer.ts';
import { createRouteLookup, type RouteInfo } from './pages/route-matcher.ts';
import { UndeclaredReads } from './pages/undeclared-reads.ts';
import { withPageHints } from './pages/route-preloads.ts';
import { workerSlot } from './process/worker.ts';
import type * as AppBundle from './main.server.mjs';
import { type PartRules, readPartRules } from './pages/personal/declarations.ts';
import { createPartStore, type PartStore } from './pages/personal/part-cache.ts';
import { VisitorParts, type VisitorPartsOptions } from './pages/personal/visitor-parts.ts';
import type { PersonalPages } from './pages/pages.ts';
import { StartupError } from './startup-error.ts';
import type { Readiness } from './process/health.ts';
import { RedisLink } from './redis/link.ts';
import {
  createDataStore,
  createDataTier,
  DataCache,
  type DataStore,
  type DataTier,
} from './data-cache/data-cache.ts';
import { processFetch } from './data-cache/render-fetch.ts';
import { buildId } from './render-cache/build-id.ts';
import {
  createPageStore,
  createPageTier,
  type PageStore,
  type PageTier,
} from './render-cache/page-cache.ts';
import { createCdnPurge } from './revalidation/cdn-purge.ts';
import { clusterChannel } from './revalidation/cluster-channel.ts';
import { revalidateEndpoint } from './revalidation/endpoint.ts';
import { redisChannel } from './revalidation/redis-channel.ts';
import { checkedRevalidation } from './revalidation/request.ts';
import { Revalidator } from './revalidation/revalidator.ts';

/** The build this process serves: dist/server/ (this bundle and the app's) and dist/browser/. */
export interface Build {
  /** The app's bundle, or each locale's in a localized build (locales/build-layout.ts). */
  layout: BuildLayout;
  serverDir: string;
  browserDir: string;
  /** Read from the build's manifests at startup (hints/page-hints.ts). */
  hints: PageHints;
}

/** What a serving process is made of, for server.ts to listen with and to reach from outside. */
export interface Parts {
  listener: RequestListener;
  readiness: Readiness;
  /** This process's render cache; undefined when RENDER_CACHE_BYTES is 0. */
  renderCache: PageStore | undefined;
  revalidator: Revalidator;
}

/**
 * The caches: this process's store and, with REDIS_URL, the shared tier, and the origin's one
 * Redis link (also the asset archive's, with ASSET_ARCHIVE=redis).
 */
interface Caches {
  store: PageStore | undefined;
  shared: { tier: PageTier; link: RedisLink; keyPrefix: string } | undefined;
  /** What renders fetch: always there (it accounts for the data of every page), kept when DATA_CACHE_BYTES > 0. */
  data: { cache: DataCache; store: DataStore | undefined; tier: DataTier | undefined };
  link: RedisLink | undefined;
  build: string;
  /** Visitors' personal parts kept for them (PART_CACHE_BYTES), for an app with parts. */
  parts: PartStore | undefined;
}

export function createParts(
  config: OriginConfig,
  build: Build,
  log: Logger,
  tracing?: { stats: TracingStats },
): Parts {
  const readiness = { ready: true };
  // One policy (and nonce placeholder) per process; every HTML answer gets its own nonce.
  const csp = config.csp && new ContentSecurityPolicy(config.csp);
  // Route chunks as Angular's engine preloads them, always; Link and 103 unless EARLY_HINTS=off.
  const { earlyHints } = config;
  const hints = earlyHints === 'off' ? undefined : { hints: build.hints, mode: earlyHints };
  const locales = localeMap(build.layout);
  const serves = servedFiles(build.layout);
  const engine = withPageHints(
    createEngine(config, build.layout, locales, csp),
    build.hints,
    hints !== undefined,
  );
  // Each locale's app's personal parts (the same declarations in every locale's bundle).
  const partRules = build.layout.locales.map(({ app }) => partRulesOf(app, config));
  const hasParts = partRules.some((rules) => rules !== undefined);
  const caches = createCaches(config, build, csp, log, hasParts);
  const renderer = createRenderer(config, engine, caches.data.cache, log, { markParts: hasParts });
  const revalidator = createRevalidator(config, caches, log);
  const index = buildStaticIndex(build.browserDir, prerendered(build), {
    maxTotalBytes: config.files.maxTotalBytes,
    csp,
    hints: hints?.hints,
    locales,
    serves,
  });
  // What /healthz reports, and what the metrics read: one source for both.
  const stats = statsOf(config, { renderer, caches, revalidator, tracing }, locales && build);
  if (config.metrics) {
    recordMetrics(stats);
  }
  observeRequests(config, log);
  const listener = createOrigin({
    hosts: config.hosts,
    files: { browserDir: build.browserDir, index },
    archive: createArchive(config, caches, build.browserDir, log),
    pages: createAllPages(config, build, locales, { renderer, caches, csp, partRules, log }),
    pageRoots: new Set(locales?.sites.map(({ prefix }) => prefix)),
    hints,
    csp,
    readiness,
    revalidateEndpoint: endpointOf(config, revalidator),
    api: appApi(build.layout),
    apiOrigin: { revalidate: async (asked) => revalidator.revalidate(checkedRevalidation(asked)) },
    build: hasParts ? caches.build : undefined,
    stats,
    log,
    fastPath: config.files.fastPath,
  });
  return { listener, readiness, renderCache: caches.store, revalidator };
}

/**
 * What `npm start` serves with: the production Koa chain and pages, rendering through the same
 * Renderer (its limiter, the render inputs, the data cache) and deciding each page's Cache-Control
 * the same way, so that a page made of private or failed data says so in development too. On the
 * dev server's build in memory: Angular's engine (it injects the live-reload client), stopped when
 * the client leaves as Angular's own dev server does; no files (the dev server serves them); no
 * render cache (a page changes with every edit).
 */
export function createDevListener(
  config: OriginConfig,
  {
    lookupRoute,
    api,
    app,
  }: { lookupRoute: (path: string) => RouteInfo; api: AppApi | undefined; app: typeof AppBundle },
  log: Logger,
): RequestListener {
  const data = new DataCache({
    ...config.dataCache,
    store: config.dataCache.maxBytes > 0 ? createDataStore(config.dataCache.maxBytes) : undefined,
    shared: undefined,
    fetch: processFetch,
    patienceMs: config.pages.renderTimeoutMs,
    log,
  });
  const engine = createAppEngine({ allowedHosts: config.hosts.allowedHosts });
  const rules = partRulesOf(app, config);
  const renderer = createRenderer(config, engine, data, log, {
    abortable: true,
    markParts: rules !== undefined,
  });
  const pages = createPages({
    ...config.pages,
    renderer,
    lookupRoute,
    clientShell: undefined,
    cache: undefined,
    csp: undefined,
    trustProxy: config.hosts.trustProxy,
    build: 'dev',
    // Filled as in production, never kept: a change to a part shows on the next reload.
    personal: personalPages(rules, app, {
      renderer,
      store: undefined,
      build: 'dev',
      locale: undefined,
      csp: undefined,
      log,
    }),
    log,
  });
  observeRequests(config, log);
  return createOrigin({
    hosts: config.hosts,
    files: undefined,
    api,
    pages,
    readiness: { ready: true },
    stats: () => ({ pid: process.pid, renders: renderer.stats, dataCache: data.counts }),
    log,
    fastPath: false,
  });
}

/** The routes the build prerendered. */
function prerendered(build: Build) {
  return readPrerenderedRoutes(join(build.serverDir, '../prerendered-routes.json'));
}

/** POST /_origin/revalidate, when REVALIDATE_TOKEN is set. */
function endpointOf(config: OriginConfig, revalidator: Revalidator) {
  const { token } = config.revalidation;
  return token === undefined
    ? undefined
    : revalidateEndpoint(token, (request) => revalidator.revalidate(request));
}

/**
 * What watches every request besides the metrics (METRICS_PORT: recordMetrics) and the traces
 * (OTEL_*): the access log (ACCESS_LOG), Server-Timing (SERVER_TIMING); none by default, and then
 * nothing is paid per request. Each subscribes to the origin's channels (observe/channels.ts).
 */
export function observeRequests(config: OriginConfig, log: Logger): void {
  if (config.log.access) {
    logRequests(log);
  }
  if (config.serverTiming) {
    timeAnswers();
  }
}

/**
 * The app's own API, if its bundle exports one: every locale's bundle holds the same code, so the
 * first's (an API is not localized: `/api/…` is under no locale's prefix).
 */
export function appApi(layout: BuildLayout): AppApi | undefined {
  const { api } = layout.locales[0].app;
  return typeof api === 'function' ? api : undefined;
}

/** What /healthz reports of this process, and what the metrics read. */
function statsOf(
  config: OriginConfig,
  {
    renderer,
    caches,
    revalidator,
    tracing,
  }: {
    renderer: Renderer;
    caches: Caches;
    revalidator: Revalidator;
    tracing: { stats: TracingStats } | undefined;
  },
  localized: Build | undefined,
) {
  return () => ({
    ...processStats(config),
    renders: renderer.stats,
    renderCache: caches.store?.stats,
    sharedCache: caches.shared?.tier.stats,
    dataCache: dataStats(caches.data),
    partCache: caches.parts?.stats,
    revalidations: revalidator.stats,
    errors: Object.fromEntries(errorCounts()),
    tracing: tracing?.stats,
    locales: localized?.layout.locales.map(({ locale }) => locale),
  });
}

/** Which process this is, in /healthz. */
function processStats(config: OriginConfig) {
  return {
    pid: process.pid,
    worker: cluster.worker?.id,
    workers: config.processes.workers,
    engine: config.engine.name,
  };
}

/** The data cache in /healthz: its store's figures, its shared tier's, and every fetch by host. */
function dataStats(data: Caches['data']) {
  return {
    ...data.store?.stats,
    shared: data.tier?.stats,
    byHost: Object.fromEntries(data.cache.counts),
  };
}

/** Renders in the limiter's slots, their reads of undeclared inputs said (RENDER_INPUTS_STRICT). */
function createRenderer(
  config: OriginConfig,
  engine: PageEngine,
  data: DataCache,
  log: Logger,
  { abortable = false, markParts = false }: { abortable?: boolean; markParts?: boolean } = {},
): Renderer {
  const limiter = new RenderLimiter(config.limits);
  const reads = new UndeclaredReads({ log, strict: config.pages.strictInputs });
  return new Renderer({ engine, limiter, reads, log, data, abortable, markParts });
}

/** The app's personal parts as declared (a bad declaration stops the start), or none. */
function partRulesOf(app: typeof AppBundle, config: OriginConfig): PartRules | undefined {
  const rules = readPartRules(app.personalParts, config.pages.renderTimeoutMs);
  if (rules !== undefined && typeof app.renderPart !== 'function') {
    throw new StartupError(
      'the app bundle exports personalParts but no renderPart: export it from main.server.ts (src/app/personal-part.server.ts makes it)',
    );
  }
  return rules;
}

/** What fills an app's personal parts for a visitor; undefined for an app without parts. */
function personalPages(
  rules: PartRules | undefined,
  app: typeof AppBundle,
  options: Omit<VisitorPartsOptions, 'rules' | 'engine'>,
): PersonalPages | undefined {
  return rules === undefined
    ? undefined
    : { rules, visitors: new VisitorParts({ ...options, rules, engine: app.renderPart! }) };
}

/**
 * The pages of each locale (the one app of a plain build): its routes, its client-side shell; one
 * renderer and one render cache for all.
 */
function createAllPages(
  config: OriginConfig,
  build: Build,
  locales: LocaleMap | undefined,
  shared: {
    renderer: Renderer;
    caches: Caches;
    csp: ContentSecurityPolicy | undefined;
    log: Logger;
    /** The personal parts of each locale's app, in the layout's order. */
    partRules: readonly (PartRules | undefined)[];
  },
): Pages {
  const { renderer, caches, csp, log } = shared;
  const personal = (i: number, locale: string | undefined) =>
    personalPages(shared.partRules[i], build.layout.locales[i].app, {
      renderer,
      store: caches.parts,
      build: caches.build,
      locale,
      csp,
      log,
    });
  const pagesOf = ({ app, browserDir, locale, prefix }: LocaleBuild, i: number): Pages => {
    const lookup = createRouteLookup(app.serverRoutes, log);
    return createPages({
      ...config.pages,
      renderer,
      lookupRoute: locale === undefined ? lookup : (path) => lookup(pathInSite({ prefix }, path)),
      clientShell: readClientShell(browserDir),
      languageHeaders:
        locales &&
        ((path, status) => {
          const said = pageLanguage(locales, path);
          return said && languageHeaders(said, status);
        }),
      cache: caches.store && { store: caches.store, shared: caches.shared?.tier },
      csp,
      trustProxy: config.hosts.trustProxy,
      locale,
      build: caches.build,
      personal: personal(i, locale),
      log,
    });
  };
  if (locales === undefined) {
    return pagesOf(build.layout.locales[0], 0);
  }
  return localizedPages({
    sites: build.layout.locales.map((site, i) => ({
      locale: site.locale!,
      prefix: site.prefix,
      pages: pagesOf(site, i),
    })),
    every: locales.sites,
    basePath: locales.basePath,
    cookie: config.localeCookie,
  });
}

/**
 * A localized build's locales and where they live, every one of them, served here or not (its
 * pages name them all as alternates); undefined for a plain build.
 */
function localeMap(layout: BuildLayout): LocaleMap | undefined {
  return layout.localized
    ? {
        sites: layout.every.map(({ locale, prefix }) => ({ locale: locale!, prefix })),
        basePath: layout.basePath,
      }
    : undefined;
}

/** With LOCALES, the files of the locales served here; undefined: every file of the build. */
function servedFiles(layout: BuildLayout): ((urlPath: string) => boolean) | undefined {
  if (layout.locales.length === layout.every.length) {
    return undefined;
  }
  const served = new Set(layout.locales.map(({ locale }) => locale));
  return (urlPath) => served.has(siteOf(layout.every, urlPath)?.locale);
}

/**
 * Only the chosen engine is constructed: the other costs nothing, not even its startup work.
 * Angular's engine serves every locale of a build itself; CommonEngine renders with each locale's
 * own bundle, picked by the URL's prefix.
 */
function createEngine(
  config: OriginConfig,
  layout: BuildLayout,
  locales: LocaleMap | undefined,
  csp: ContentSecurityPolicy | undefined,
): PageEngine {
  const { allowedHosts } = config.hosts;
  if (config.engine.name === 'app') {
    const engine = createAppEngine({ allowedHosts });
    return locales ? withLanguageHeaders(engine, locales) : engine;
  }
  const engines = layout.locales.map(({ app, browserDir, serverDir, locale }) =>
    createCommonEngine({
      app,
      browserDir,
      serverDir,
      allowedHosts,
      criticalCss: config.engine.criticalCss,
      csp,
      locale,
    }),
  );
  if (locales === undefined) {
    return engines[0];
  }
  const served = layout.locales.map(({ prefix }, i) => ({ prefix, engine: engines[i] }));
  // The pages step hands a render only paths under a served locale's prefix (pages/localized-pages.ts).
  const engine: PageEngine = (input, route, signal) =>
    siteOf(served, new URL(input.url).pathname)!.engine(input, route, signal);
  return withLanguageHeaders(engine, locales);
}

/** With REDIS_URL, a miss here asks the tier every process of every replica shares. */
function createCaches(
  config: OriginConfig,
  { layout }: Build,
  csp: ContentSecurityPolicy | undefined,
  log: Logger,
  hasParts: boolean,
): Caches {
  // Every locale's bundle, served here or not: processes serving other locales share the id.
  const build = buildId(layout.every);
  const parts =
    hasParts && config.partCacheBytes > 0 ? createPartStore(config.partCacheBytes) : undefined;
  const store = config.renderCache && createPageStore(config.renderCache);
  const dataStore =
    config.dataCache.maxBytes > 0 ? createDataStore(config.dataCache.maxBytes) : undefined;
  const usesRedis =
    store !== undefined || dataStore !== undefined || config.assetArchive?.store === 'redis';
  const link =
    config.sharedCache && usesRedis ? new RedisLink(config.sharedCache.link, log) : undefined;
  const settings = config.sharedCache?.tier;
  const dataTier =
    link && settings && dataStore
      ? createDataTier({
          link,
          keyPrefix: settings.keyPrefix,
          maxEntryBytes: config.dataCache.maxEntryBytes,
          log,
        })
      : undefined;
  const data = {
    cache: new DataCache({
      ...config.dataCache,
      store: dataStore,
      shared: dataTier,
      // The app's own API, when API_URL is the origin's, by this process's private listener.
      fetch: ownApiFetch(processFetch),
      patienceMs: config.pages.renderTimeoutMs,
      log,
    }),
    store: dataStore,
    tier: dataTier,
  };
  if (store === undefined || settings === undefined || link === undefined) {
    return { store, shared: undefined, data, link, build, parts };
  }
  const tier = createPageTier({ ...settings, link, buildId: build, csp, log });
  const shared = { tier, link, keyPrefix: settings.keyPrefix };
  return { store, shared, data, link, build, parts };
}

/**
 * With ASSET_ARCHIVE, recent builds' hashed files, on the shared tier's Redis or a volume; this
 * build's own are published in the background.
 */
function createArchive(
  config: OriginConfig,
  caches: Caches,
  browserDir: string,
  log: Logger,
): AssetArchive | undefined {
  const settings = config.assetArchive;
  if (settings === undefined) {
    return undefined;
  }
  const archive =
    settings.store === 'redis'
      ? // config.ts requires REDIS_URL for it: the link is there.
        new RedisArchive(caches.link!, config.sharedCache!.tier.keyPrefix, settings.bounds)
      : new DirectoryArchive(settings.store.dir, settings.bounds);
  publishInBackground(archive, caches.build, browserDir, log);
  return archive;
}

/**
 * Revalidation reaches this process's cache, this pod's other workers through the cluster's IPC
 * (even while Redis is down), every process of every replica through Redis (a message heard on
 * both is applied once), and the CDN through its purge hook.
 */
function createRevalidator(config: OriginConfig, caches: Caches, log: Logger): Revalidator {
  const { shared, data, link } = caches;
  const keyPrefix = config.sharedCache?.tier.keyPrefix;
  const reachesRedis =
    link !== undefined &&
    keyPrefix !== undefined &&
    (shared !== undefined || data.tier !== undefined);
  return new Revalidator({
    caches: [caches.store, data.store, caches.parts].filter((cache) => cache !== undefined),
    channels: [
      ...(workerSlot() !== undefined ? [clusterChannel()] : []),
      ...(reachesRedis
        ? [
            redisChannel({
              link,
              pages: shared?.tier,
              data: data.tier,
              keyPrefix,
              buildId: caches.build,
              log,
            }),
          ]
        : []),
    ],
    sharedSources:
      shared &&
      (async (paths) => {
        const found = await shared.tier.sourcesOf(paths);
        return found.ok ? found.value : [];
      }),
    cdnPurge: config.revalidation.cdnPurge && createCdnPurge(config.revalidation.cdnPurge, log),
    log,
  });
}
