// The demo's API: the data its pages fetch during the render, as real apps fetch theirs. A web
// standard handler, so any server can mount it: the origin answers `/api/…` with it before the Host
// guard (server/app-api/), the bench serves it on a port of its own. It answers JSON with what a real
// API sends caches (Cache-Control, a strong ETag, cache tags, 304s) and says what is wrong with a
// request as JSON, never with an exception.
import type { Catalog, Product } from '../app/products';
import { type Caching, jsonAnswer, jsonBody, type JsonBody, jsonError } from './json';
import { makeCatalog, makeProduct, MAX_PRODUCT_ID } from './products';
import { cart, me, type OriginApi } from './visitors';

/** What every page shares changes rarely: a minute fresh, then ten more served while refreshed. */
const CATALOG_CACHING: Caching = {
  cacheControl: 'public, max-age=60, stale-while-revalidate=600',
  tags: ['catalog'],
};
/**
 * A product, tagged with its id: publishing it purges its pages by that tag. Five minutes fresh:
 * a shop has many more products than a cache sees each minute, and each one a cache keeps is asked
 * again once per max-age (300 products at 60 pages a second: one request per 60 pages, where a
 * minute would make it one per 12). A change reaches readers sooner through its tag.
 */
const productCaching = (id: number): Caching => ({
  cacheControl: 'public, max-age=300, stale-while-revalidate=600',
  tags: [`product-${id}`],
});
const METHODS = 'GET, HEAD';
/** The longest id said back in an error: a request may send any length. */
const QUOTED_ID = 12;

/** Computed once: the catalog is the same on every request. */
let catalog: Promise<JsonBody> | undefined;

/**
 * Answers a request under `/api/` (GET and HEAD: `/api/catalog`, `/api/products/:id`; the signed-in
 * visitor's `/api/me` and `/api/cart`, which POST adds to: visitors.ts), or null for a path outside
 * it, which the server answers as it would without the API. `origin` is what the origin that mounts
 * it gives (revalidation), undefined under another server.
 */
export async function api(request: Request, origin?: OriginApi): Promise<Response | null> {
  const { pathname } = new URL(request.url);
  if (pathname !== '/api' && !pathname.startsWith('/api/')) {
    return null;
  }
  await simulatedLatency();
  const [resource, id, ...rest] = pathname.slice('/api/'.length).split('/');
  if (resource === 'me' && id === undefined) {
    return me(request);
  }
  if (resource === 'cart' && id === undefined) {
    return cart(request, origin);
  }
  const known =
    (resource === 'catalog' && id === undefined) ||
    (resource === 'products' && id !== undefined && rest.length === 0);
  if (!known) {
    return jsonError(
      request,
      404,
      'no such resource: the API has /api/catalog, /api/products/:id, /api/me and /api/cart',
    );
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return jsonError(request, 405, `${METHODS} only`, { allow: METHODS });
  }
  if (resource === 'catalog') {
    catalog ??= jsonBody(makeCatalog() satisfies Catalog);
    return jsonAnswer(request, await catalog, CATALOG_CACHING);
  }
  return product(request, id);
}

/** `/api/products/:id`: 400 for an id that is not one, 404 for one that names no product. */
async function product(request: Request, id: string): Promise<Response> {
  if (!/^[1-9]\d*$/.test(id)) {
    return jsonError(request, 400, 'a product id is a whole number from 1, without leading zeros');
  }
  const value = Number(id);
  if (value > MAX_PRODUCT_ID) {
    const quoted = id.length <= QUOTED_ID ? id : `${id.slice(0, QUOTED_ID)}…`;
    return jsonError(request, 404, `no product ${quoted}: ids go from 1 to ${MAX_PRODUCT_ID}`);
  }
  const body = await jsonBody(makeProduct(value) satisfies Product);
  return jsonAnswer(request, body, productCaching(value));
}

let warnedDelay = false;

/**
 * DEMO_API_DELAY_MS (default 0): how long each answer waits, to try the data cache against an API
 * slower than this one. Read on every request, so a test can change it without a restart.
 */
function simulatedLatency(): Promise<void> | undefined {
  const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process
    ?.env;
  const raw = env?.['DEMO_API_DELAY_MS'];
  if (raw === undefined || raw === '' || raw === '0') {
    return undefined;
  }
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 60_000) {
    if (!warnedDelay) {
      warnedDelay = true;
      console.warn(
        `DEMO_API_DELAY_MS must be whole milliseconds from 0 to 60000, got "${raw}": ignored`,
      );
    }
    return undefined;
  }
  return new Promise((resolve) => setTimeout(resolve, ms));
}
