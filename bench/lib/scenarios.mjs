// What each scenario asks for. The list of requests is plain data so that it can cross to the load
// worker; the only dynamic part (the rotating product id) is named, not passed as a function.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Product ids are 1..999999 (src/app/products.ts). */
const MAX_PRODUCT_ID = 999_999;
/**
 * Stepping through the ids by a number coprime with 999999 visits every id once before repeating,
 * in an order no cache or branch predictor can anticipate from the previous one.
 */
const PRODUCT_STEP = 7_919;
let productCounter = 0;

/** The k-th product id of the rotation (1-based ids, k ≥ 0). */
export function productIdAt(k) {
  return ((k * PRODUCT_STEP + 12_345) % MAX_PRODUCT_ID) + 1;
}

/** The next product page of the rotation: a different id on every call. */
export function nextProductPath() {
  return `/products/${productIdAt(productCounter++)}`;
}

/** Products many visitors share: the first ids of the same rotation, over and over. */
export const POPULAR_PRODUCTS = 100;

/**
 * The popular product pages as a fixed list each connection cycles through: autocannon builds each
 * request once, where a rotating path costs the load generator a function call per request (which
 * made it, not the server, the limit of a cached scenario).
 */
function popularProducts() {
  return Array.from({ length: POPULAR_PRODUCTS }, (_, k) => ({ path: `/products/${productIdAt(k)}` }));
}

/**
 * @typedef {{ path: string, file: string, size: number, kind: 'html' | 'js' | 'css' }} BuildFile
 * @typedef {{ browserDir: string, page: BuildFile, mainJs: BuildFile, stylesCss: BuildFile,
 *   initialChunks: BuildFile[] }} BuildInfo
 */

/**
 * Reads what the scenarios need from the browser build: the prerendered page, the main bundle, the
 * global stylesheet and the chunks every page load preloads (from the client shell, so they are the
 * route-independent ones).
 * @param {string} browserDir
 * @returns {BuildInfo}
 */
export function describeBuild(browserDir) {
  const names = readdirSync(browserDir);
  const file = (name, kind) => ({ path: `/${name}`, file: join(browserDir, name), size: statSync(join(browserDir, name)).size, kind });
  const main = names.find((name) => /^main-[\w-]+\.js$/.test(name));
  const styles = names.find((name) => /^styles-[\w-]+\.css$/.test(name));
  if (!main || !styles || !names.includes('index.html') || !names.includes('index.csr.html')) {
    throw new Error(`${browserDir} lacks main-*.js, styles-*.css, index.html or index.csr.html: is it a production build?`);
  }
  const shell = readFileSync(join(browserDir, 'index.csr.html'), 'utf8');
  const preloads = [...shell.matchAll(/<link rel="modulepreload" href="([^"]+\.js)"/g)].map((match) => match[1]);
  return {
    browserDir,
    page: { ...file('index.html', 'html'), path: '/' },
    mainJs: file(main, 'js'),
    stylesCss: file(styles, 'css'),
    initialChunks: preloads.filter((name) => names.includes(name)).map((name) => file(name, 'js')),
  };
}

/**
 * @typedef {import('./load-worker.mjs').LoadRequest} LoadRequest
 * @typedef {{ name: string, title: string, describe: string, requests: (build: BuildInfo, context: { etag?: string }) => LoadRequest[], renders?: boolean,
 *   refreshesCache?: boolean }} Scenario
 */

/** One page load: the HTML, then the stylesheet and the JavaScript it references. */
function pageLoad(build, html) {
  return [html, { path: build.stylesCss.path }, { path: build.mainJs.path }, ...build.initialChunks.map((chunk) => ({ path: chunk.path }))];
}

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    name: 'ssg',
    title: 'ssg: prerendered /',
    describe: 'GET / (the prerendered Material form page).',
    requests: () => [{ path: '/' }],
  },
  {
    name: 'ssr',
    title: 'ssr: /products/:id rendered per request',
    describe: 'GET /products/<id>, a different id on every request (ids 1..999999 in a fixed pseudo-random order).',
    requests: () => [{ path: '/products/1', rotate: 'product' }],
    renders: true,
  },
  {
    name: 'ssr-cached',
    title: 'ssr-cached: /products/:id, 100 popular ids (render cache)',
    describe:
      `GET /products/<id> over the first ${POPULAR_PRODUCTS} ids of the same rotation, so each page is asked for again and again: the route declares \`s-maxage=60\`, so the origin renders each once into its render cache; the peers have no such cache and render every request.`,
    requests: () => popularProducts(),
    renders: true,
    refreshesCache: true,
  },
  {
    name: 'asset',
    title: 'asset: main JS + CSS',
    describe: 'GET of the main bundle and the global stylesheet, alternately.',
    requests: (build) => [{ path: build.mainJs.path }, { path: build.stylesCss.path }],
  },
  {
    name: 'revalidate',
    title: 'revalidate: / with If-None-Match',
    describe: "GET / with If-None-Match set to the ETag the variant sent for / (304 expected); a variant without ETag gets the plain GET a browser would send.",
    requests: (_build, { etag }) => [{ path: '/', ...(etag ? { headers: { 'if-none-match': etag } } : {}) }],
  },
  {
    name: 'mixed',
    title: 'mixed: page loads',
    describe:
      'Page loads in a loop: the HTML (alternately / and a rotating /products/<id>), then the stylesheet, the main bundle and the chunks the page preloads.',
    requests: (build) => [
      ...pageLoad(build, { path: '/' }),
      ...pageLoad(build, { path: '/products/1', rotate: 'product' }),
    ],
    renders: true,
  },
  {
    name: 'mixed-cached',
    title: 'mixed-cached: page loads, popular products (render cache)',
    describe: `The \`mixed\` page loads with the product page drawn from the ${POPULAR_PRODUCTS} popular ids (render cache on in the origin; the peers render).`,
    requests: (build) => popularProducts().flatMap((product) => [...pageLoad(build, { path: '/' }), ...pageLoad(build, product)]),
    renders: true,
    refreshesCache: true,
  },
];

export const SCENARIO_NAMES = SCENARIOS.map((scenario) => scenario.name);

/** @param {string} name */
export function getScenario(name) {
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  if (!scenario) throw new Error(`unknown scenario "${name}" (known: ${SCENARIO_NAMES.join(', ')})`);
  return scenario;
}
