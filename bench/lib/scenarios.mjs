// What each scenario asks for. The list of requests is plain data so that it can cross to the load
// worker; the only dynamic part (the rotating product id) is named, not passed as a function.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';
import { REDIS_SERVER } from '../../scripts/lib/redis-server.mjs';
import { pathInSite } from '../../server/locales/locale-sites.ts';
import { BURST_PAGES, DATA_DELAY_MS } from './data-upstream.mjs';

/** The app's pages to load (load-paths.json): the demo's are /, /products/{id} (1..999999), /dashboard. */
export const PATHS = readLoadPaths();
const RENDERED = PATHS.rendered;

/** The k-th page of the rendered rotation (k ≥ 0): every id once before any repeats. */
export function renderedPathAt(k) {
  if (!RENDERED) throw new Error('load-paths.json names no "rendered" page');
  return RENDERED.at(k);
}

/** Pages many visitors share: the first ids of the same rotation, over and over. */
export const POPULAR_PRODUCTS = RENDERED ? Math.min(100, RENDERED.count) : 0;

/**
 * Where the load's rotation starts: past the popular pages, which the ssr-cached checks store in
 * each origin's render cache before any load, so that a page rendered per request is one no cache
 * holds until the rotation has used up every page of the route.
 */
let productCounter = POPULAR_PRODUCTS;

/** Pages made of data (load-paths.json's "data"): a few hundred, cycled over by ssr-data. */
const DATA = PATHS.data;

/** The k-th page made of data (k ≥ 0), each page once before any repeats. */
export function dataPathAt(k) {
  if (!DATA) throw new Error('load-paths.json names no "data" page');
  return DATA.at(k);
}

/** Every page made of data, as a fixed list each connection cycles through (as popularProducts). */
export function dataPages() {
  return Array.from({ length: DATA?.count ?? 0 }, (_, k) => ({ path: dataPathAt(k) }));
}

/** The next rendered page of the rotation: a different id on every call. */
export function nextProductPath() {
  return renderedPathAt(productCounter++);
}

/**
 * The popular product pages as a fixed list each connection cycles through: autocannon builds each
 * request once, where a rotating path costs the load generator a function call per request (which
 * made it, not the server, the limit of a cached scenario).
 */
function popularProducts() {
  return Array.from({ length: POPULAR_PRODUCTS }, (_, k) => ({ path: renderedPathAt(k) }));
}

/**
 * The popular pages as visitors ask for them: each page once per value of the cookies the app's
 * routes declare (the demo's three currencies), each request then given a new session and
 * analytics cookies by the load worker (`rotate: 'visitor'`).
 * @param {BuildInfo} build
 */
function visitorRequests(build) {
  /** @type {string[][]} */
  let combinations = [[]];
  for (const { name, values } of build.declaredCookies ?? []) {
    combinations = combinations.flatMap((pairs) =>
      values.map((value) => [...pairs, `${name}=${value}`]),
    );
  }
  return popularProducts().flatMap((page) =>
    combinations.map((pairs) => ({
      ...page,
      rotate: /** @type {const} */ ('visitor'),
      ...(pairs.length ? { headers: { cookie: pairs.join('; ') } } : {}),
    })),
  );
}

/** ssr-personal's signed-in visitors (personal-parts.mjs), and the popular pages each one visits. */
export const PERSONAL_VISITORS = 100;
export const PAGES_PER_VISITOR = 5;
/** The cookie a personal part of the rendered pages declares, and what the part shows (load-paths.json). */
const PERSONAL = PATHS.personal;

/**
 * A visitor's session, a value of the part's cookie: letters and digits (what an app's session
 * check accepts), its first four characters its own among `prefix`'s visitors (up to 1,000);
 * `rest` makes other visitors of the same names (the checks' new ones).
 */
export const sessionOf = (v, prefix = 'v', rest = 'session') =>
  `${prefix}${String(v).padStart(3, '0')}${rest}`;

/** Visitor v's pages: PAGES_PER_VISITOR of the popular ones, each page shared by several visitors. */
export const visitorPages = (v) =>
  Array.from({ length: PAGES_PER_VISITOR }, (_, j) =>
    renderedPathAt((v * PAGES_PER_VISITOR + j) % POPULAR_PRODUCTS),
  );

/**
 * What each setup of ssr-personal asks for, as fixed lists each connection cycles through: every
 * returning visitor's pages in turn (`anonymous` without the cookie, `returning` and `stock` with
 * the visitor's), the same pages with a new visitor on every request (`new`: the load worker
 * makes each session, `rotate: 'visitor'`), or the private page of each returning visitor.
 * @param {'anonymous' | 'returning' | 'new' | 'private' | 'stock'} kind
 * @param {number} [round] a round of the bench, whose signed-in visitors are its own (their
 *   sessions end in the round's number): a part is kept for its maxAge from when it was made, and
 *   one an earlier round made would be found fresh by this round's sweep, not made again, and
 *   expire during the run (a round in two or three of five rendered most of its parts again,
 *   2026-12-07, the returning rounds about a minute apart)
 * @returns {LoadRequest[]}
 */
export function personalRequests(kind, round = 0) {
  const cookie = PERSONAL?.cookie ?? 'sid';
  const visitors = Array.from({ length: PERSONAL_VISITORS }, (_, v) => v);
  const session = round === 0 ? 'session' : `session${round}`;
  const signedIn = (v) => ({ cookie: `${cookie}=${sessionOf(v, 'v', session)}` });
  if (kind === 'private')
    return visitors.map((v) => ({ path: PERSONAL?.private.path ?? '/', headers: signedIn(v) }));
  return visitors.flatMap((v) =>
    visitorPages(v).map((path) =>
      kind === 'anonymous'
        ? { path }
        : kind === 'new'
          ? { path, rotate: /** @type {const} */ ('visitor'), session: cookie }
          : { path, headers: signedIn(v) },
    ),
  );
}

/**
 * The Host every request of ssr-shared carries, whichever process it reaches: replicas behind a load
 * balancer are asked for the same public host, and the page's cache key includes it (each process's
 * own 127.0.0.1:<port> would give each its own keys, and nothing to share). One of the default hosts.
 */
export const SHARED_HOST = 'localhost';

/**
 * @typedef {{ path: string, file: string, size: number, kind: 'html' | 'js' | 'css' }} BuildFile
 * @typedef {{ browserDir: string, page: BuildFile, mainJs: BuildFile, stylesCss?: BuildFile,
 *   criticalCss: boolean, initialChunks: BuildFile[],
 *   declaredCookies?: { name: string, values: string[] }[] }} BuildInfo
 *   (stylesCss: the global stylesheet, absent when the app has none; criticalCss: whether a render
 *   can inline any of it, false when it holds no rule; declaredCookies: what the app's routes
 *   declare with renderInputs(), for ssr-visitors)
 */

const shown = (path) => (path.startsWith(`${ROOT}/`) ? relative(ROOT, path) : path);

/** The routes the build says it prerendered (its prerendered-routes.json), if it says. */
function prerenderedRoutes(dist) {
  const file = join(dist, 'prerendered-routes.json');
  if (!existsSync(file)) return undefined;
  try {
    return Object.keys(JSON.parse(readFileSync(file, 'utf8')).routes ?? {});
  } catch {
    return undefined;
  }
}

/** Whether a stylesheet holds any rule once its comments and whitespace are gone. */
const hasRules = (css) => css.replace(/\/\*[\s\S]*?\*\//g, '').trim() !== '';

/**
 * Reads what the scenarios need from the browser build: the prerendered page load-paths.json names,
 * the main bundle, the global stylesheet (if the app has one) and the chunks every page load
 * preloads (from the client shell, so they are the route-independent ones). In a localized build,
 * the measured locale's (bench/lib/measured-site.mjs): its folder, its files' URLs under its prefix.
 * Throws naming the file that is missing, and why it would be.
 * @param {{ browserDir: string, prefix: string }} site
 * @param {string} [dist] the build's output folder, whose prerendered-routes.json names the routes
 *   the build prerendered (for the error when load-paths.json names another)
 * @returns {BuildInfo}
 */
export function describeBuild({ browserDir, prefix }, dist) {
  const names = readdirSync(browserDir);
  const file = (name, kind) => ({
    path: `${prefix}/${name}`,
    file: join(browserDir, name),
    size: statSync(join(browserDir, name)).size,
    kind,
  });
  const missing = (what, why) => new Error(`${shown(join(browserDir, what))} is missing: ${why}`);
  const main = names.find((name) => /^main-[\w-]+\.js$/.test(name));
  if (!main)
    throw missing('main-*.js', 'no hashed main bundle, so not a production build (ng build)');
  if (!names.includes('index.csr.html'))
    throw missing(
      'index.csr.html',
      'the client-side shell of a server build ("outputMode": "server" in angular.json)',
    );
  const pageName = join(pathInSite({ prefix }, PATHS.prerendered).slice(1), 'index.html');
  if (!existsSync(join(browserDir, pageName))) {
    const routes = dist === undefined ? undefined : prerenderedRoutes(dist);
    throw missing(
      pageName,
      `load-paths.json's "prerendered" page ${PATHS.prerendered} was not prerendered by this build` +
        (routes
          ? ` (${shown(join(dist, 'prerendered-routes.json'))} lists ${routes.length ? routes.join(', ') : 'none'})`
          : '') +
        ': name a page whose server route has renderMode: RenderMode.Prerender',
    );
  }
  const styles = names.find((name) => /^styles-[\w-]+\.css$/.test(name));
  const shell = readFileSync(join(browserDir, 'index.csr.html'), 'utf8');
  const preloads = [...shell.matchAll(/<link rel="modulepreload" href="([^"]+\.js)"/g)].map(
    (match) => match[1],
  );
  return {
    browserDir,
    page: { ...file(pageName, 'html'), path: PATHS.prerendered },
    mainJs: file(main, 'js'),
    stylesCss: styles && file(styles, 'css'),
    // An empty global stylesheet (the stock app's) leaves nothing to inline: no <style> block.
    criticalCss: styles !== undefined && hasRules(readFileSync(join(browserDir, styles), 'utf8')),
    initialChunks: preloads.filter((name) => names.includes(name)).map((name) => file(name, 'js')),
  };
}

/**
 * @typedef {import('./load-worker.mjs').LoadRequest} LoadRequest
 * @typedef {{ name: string, title: string, describe: string, requests: (build: BuildInfo, context: { etag?: string }) => LoadRequest[], renders?: boolean,
 *   refreshesCache?: boolean, ownSetups?: boolean, acceptEncoding?: string, ownProcess?: boolean,
 *   upstreamDelayMs?: number, equalLoadShare?: number }} Scenario
 *   (ownSetups: not run per variant, but in setups of its own: ssr-shared's pairs of origins
 *   (shared-tier.mjs), ssr-personal's origin and stock server (personal-parts.mjs);
 *   ownProcess: each variant runs it in a process of its own, started with its own settings and
 *   API (bench/lib/data-upstream.mjs); upstreamDelayMs: how late that API answers; equalLoadShare:
 *   the most its fixed-rate runs ask, as a share of the slowest variant's median)
 */

/** One page load: the HTML, then the stylesheet and the JavaScript it references. */
function pageLoad(build, html) {
  return [
    html,
    ...(build.stylesCss ? [{ path: build.stylesCss.path }] : []),
    { path: build.mainJs.path },
    ...build.initialChunks.map((chunk) => ({ path: chunk.path })),
  ];
}

const R = RENDERED?.path.replace(/\{(\w+)\}/, ':$1') ?? '(none)';
const D = DATA?.path.replace(/\{(\w+)\}/, ':$1') ?? '(none)';
const P = PATHS.prerendered;
const renderedWhat =
  RENDERED && RENDERED.status !== 200
    ? ` (answered ${RENDERED.status}: still a full render per request)`
    : '';

/** What a browser sends: the compressed scenarios ask with it (and a client that sends none gets none). */
export const BROWSER_ACCEPT_ENCODING = 'br, gzip';
/** A scenario's requests, each with the browser's Accept-Encoding. */
const compressed = (requests) =>
  requests.map((request) => ({
    ...request,
    headers: { ...request.headers, 'accept-encoding': BROWSER_ACCEPT_ENCODING },
  }));

/** @type {(Scenario & { needs?: 'rendered' | 'cached' | 'data' | 'personal', needsRedis?: boolean })[]} */
const ALL_SCENARIOS = [
  {
    name: 'ssg',
    title: `ssg: prerendered ${P}`,
    describe: `GET ${P} (a page the build prerendered).`,
    requests: () => [{ path: P }],
  },
  {
    name: 'ssg-br',
    title: `ssg-br: prerendered ${P}, Accept-Encoding: ${BROWSER_ACCEPT_ENCODING}`,
    describe: `GET ${P} as a browser asks for it, with \`Accept-Encoding: ${BROWSER_ACCEPT_ENCODING}\`: a server that compresses answers with fewer bytes (the origin: the build's brotli copy).`,
    requests: () => compressed([{ path: P }]),
    acceptEncoding: BROWSER_ACCEPT_ENCODING,
  },
  {
    name: 'ssr',
    title: `ssr: ${R} rendered per request`,
    describe: `GET ${RENDERED?.path}, a different id on every request (${RENDERED?.label} in a fixed pseudo-random order)${renderedWhat}.`,
    requests: () => [{ path: renderedPathAt(0), rotate: 'product' }],
    renders: true,
    needs: 'rendered',
  },
  {
    name: 'ssr-cached',
    title: `ssr-cached: ${R}, ${POPULAR_PRODUCTS} popular ids (render cache)`,
    describe: `GET ${RENDERED?.path} over the first ${POPULAR_PRODUCTS} ids of the same rotation, so each page is asked for again and again: the route declares a shared-cache policy (\`s-maxage\`), so the origin renders each once into its render cache; the peers have no such cache and render every request.`,
    requests: () => popularProducts(),
    renders: true,
    refreshesCache: true,
    needs: 'cached',
  },
  {
    name: 'ssr-cached-br',
    title: `ssr-cached-br: ${R}, ${POPULAR_PRODUCTS} popular ids, Accept-Encoding: ${BROWSER_ACCEPT_ENCODING}`,
    describe: `\`ssr-cached\` as a browser asks, with \`Accept-Encoding: ${BROWSER_ACCEPT_ENCODING}\` (the origin answers with the page's brotli coding, compressed once when the render cache stored it).`,
    requests: () => compressed(popularProducts()),
    acceptEncoding: BROWSER_ACCEPT_ENCODING,
    renders: true,
    refreshesCache: true,
    needs: 'cached',
  },
  {
    name: 'ssr-visitors',
    title: `ssr-visitors: ${R}, the ${POPULAR_PRODUCTS} popular ids, every request a new visitor`,
    describe: `The \`ssr-cached\` ids asked for by visitors: every request carries a session cookie of its own (\`sid\`), analytics cookies (\`_ga\`, \`_gid\`) and one of the values of each cookie the app's routes declare with renderInputs() (each page once per value). The origin answers every visitor from its render cache; the peers render every request. The hit ratio is the share of answers with \`Cache-Status: …; hit\`.`,
    requests: (build) => visitorRequests(build),
    renders: true,
    refreshesCache: true,
    needs: 'cached',
  },
  {
    name: 'ssr-data',
    title: `ssr-data: ${D}, ${DATA?.count ?? 0} pages made of data, its API ${DATA_DELAY_MS} ms away, render cache off`,
    describe: `GET ${DATA?.path} over ${DATA?.label ?? 'no pages'} (load-paths.json's "data"), each asked once before the load (warmed) and then over and over, from a process of each variant of its own: every render fetches the data every page shares and its item from the app's own API, served by the bench and answering after ${DATA_DELAY_MS} ms, as an API across a network does. The origin runs with its render cache off (RENDER_CACHE_BYTES=0: every request renders) and its data cache on, as by default; the stock server and the peers have no data cache and ask the API for every fetch. Upstream/page: what reached the API per page answered. Before anything else, a burst of ${Math.min(BURST_PAGES, DATA?.count ?? 0)} distinct pages at once on the fresh process counts how often its API was asked for what every page shares. Its fixed-rate runs ask for half the slowest variant's median (at most --equal-load).`,
    requests: () => dataPages(),
    renders: true,
    needs: 'data',
    ownProcess: true,
    upstreamDelayMs: DATA_DELAY_MS,
    equalLoadShare: 0.5,
  },
  {
    name: 'asset',
    title: 'asset: main JS + CSS',
    describe:
      'GET of the main bundle and the global stylesheet, alternately (the main bundle alone in an app without a global stylesheet).',
    requests: (build) =>
      [build.mainJs, build.stylesCss].flatMap((file) => (file ? [{ path: file.path }] : [])),
  },
  {
    name: 'revalidate',
    title: `revalidate: ${P} with If-None-Match`,
    describe: `GET ${P} with If-None-Match set to the ETag the variant sent for it (304 expected); a variant without ETag gets the plain GET a browser would send.`,
    requests: (_build, { etag }) => [
      { path: P, ...(etag ? { headers: { 'if-none-match': etag } } : {}) },
    ],
  },
  {
    name: 'mixed',
    title: 'mixed: page loads',
    describe: `Page loads in a loop: the HTML (alternately ${P} and a rotating ${RENDERED?.path}), then the stylesheet, the main bundle and the chunks the page preloads.`,
    requests: (build) => [
      ...pageLoad(build, { path: P }),
      ...pageLoad(build, { path: renderedPathAt(0), rotate: 'product' }),
    ],
    renders: true,
    needs: 'rendered',
  },
  {
    name: 'mixed-cached',
    title: 'mixed-cached: page loads, popular pages (render cache)',
    describe: `The \`mixed\` page loads with the rendered page drawn from the ${POPULAR_PRODUCTS} popular ids (render cache on in the origin; the peers render).`,
    requests: (build) =>
      popularProducts().flatMap((product) => [
        ...pageLoad(build, { path: P }),
        ...pageLoad(build, product),
      ]),
    renders: true,
    refreshesCache: true,
    needs: 'cached',
  },
  {
    // Not per variant: the origin twice, with its own setups (bench/lib/shared-tier.mjs).
    name: 'ssr-shared',
    title: `ssr-shared: ${R}, ${POPULAR_PRODUCTS} popular ids, two origin processes (and one, loaded as ssr-cached) with and without a shared Redis`,
    describe: `Two origin processes behind the same load (the connections split evenly between them, every request with the same \`Host\`, as a load balancer forwards it), on the \`ssr-cached\` ids: renders per distinct page with a shared Redis (REDIS_URL) and without, counted on fresh processes and a fresh Redis each round; req/s of an L1 hit (REDIS_URL, caches full; on the pair, and on one process loaded as ssr-cached loads the origin, with and without REDIS_URL), a shared-tier hit (REDIS_URL with RENDER_CACHE_BYTES=1: every request an L1 miss answered by Redis) and a miss (RENDER_CACHE_BYTES=0: every request renders).`,
    requests: () =>
      popularProducts().map((request) => ({ ...request, headers: { host: SHARED_HOST } })),
    ownSetups: true,
    needs: 'cached',
    needsRedis: true,
  },
  {
    // Not per variant: an origin and the stock server, each loaded in several ways (personal-parts.mjs).
    name: 'ssr-personal',
    title: `ssr-personal: ${R} with a personal part, ${PERSONAL_VISITORS} signed-in visitors × ${PAGES_PER_VISITOR} pages, new visitors, the private ${PERSONAL?.private.path ?? '(none)'}, stock`,
    describe: `The popular \`ssr-cached\` pages, whose personal part declares the \`${PERSONAL?.cookie}\` cookie, asked for by signed-in visitors, each setup loaded as its own run: \`anonymous\`, the origin's pages without the cookie (the shared cached page); \`returning\`, ${PERSONAL_VISITORS} distinct visitors each visiting ${PAGES_PER_VISITOR} of the pages (${PERSONAL_VISITORS * PAGES_PER_VISITOR} requests, over and over), so that each visitor's part, kept for them for its \`maxAge\`, is asked for again (every visitor's pages asked once before each run); \`new\`, the same pages with a new visitor on every request (a session and analytics cookies of its own), so that every part is rendered; \`private\`, the origin's ${PERSONAL?.private.path}, a route private to the visitor and rendered on every request, asked for by the returning visitors; \`stock\`, the stock server asked for the returning visitors' pages: it has no parts, renders the whole page for every request and shows every visitor the placeholder. Every answer of the origin's visitors is checked, before and after each run, for the visitor's own part ("${PERSONAL?.showsText}") and no other visitor's.`,
    requests: () => personalRequests('returning'),
    ownSetups: true,
    needs: 'personal',
  },
];

/** Why a scenario cannot run with this app's load-paths.json, or undefined when it can. */
function skipReason(scenario) {
  if (scenario.needsRedis && !existsSync(REDIS_SERVER))
    return `needs redis-server (${REDIS_SERVER} is missing: install Debian's redis-server, or set REDIS_SERVER_PATH)`;
  if (scenario.needs === 'data') {
    return PATHS.data
      ? undefined
      : 'load-paths.json names no "data" page (pages whose render fetches the app\'s own API)';
  }
  if (scenario.needs && !RENDERED) return 'load-paths.json names no "rendered" page';
  if (scenario.needs === 'personal' && !PERSONAL)
    return 'load-paths.json names no "personal" part (the cookie a personal part of its rendered pages declares)';
  if ((scenario.needs === 'cached' || scenario.needs === 'personal') && !RENDERED?.cached)
    return 'load-paths.json\'s "rendered" page is not "cached" (its route declares no shared-cache policy)';
  return undefined;
}

/** The scenarios this app's pages allow, and those skipped with the reason. */
export const SCENARIOS = ALL_SCENARIOS.filter((scenario) => !skipReason(scenario));
export const SKIPPED_SCENARIOS = ALL_SCENARIOS.filter(skipReason).map((scenario) => ({
  name: scenario.name,
  why: skipReason(scenario),
}));

export const SCENARIO_NAMES = SCENARIOS.map((scenario) => scenario.name);

/** @param {string} name */
export function getScenario(name) {
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  if (!scenario)
    throw new Error(`unknown scenario "${name}" (known: ${SCENARIO_NAMES.join(', ')})`);
  return scenario;
}
