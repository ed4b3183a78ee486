// The signed-in visitor's resources of the demo API: who they are with their cart (`/api/me`, all
// the greeting part shows) and their cart alone (`/api/cart`, which POST adds to), for the session
// in the `sid` cookie. Private answers (`private, no-store`): no cache keeps them. The carts live
// in this process's memory, bounded: a demo's store, not a shop's (a restart empties them, and
// replicas do not share them).
import { type Cart, isSessionId, type Me, visitorGroup } from '../app/visitor';
import { jsonError, privateJson } from './json';
import { MAX_PRODUCT_ID } from './products';

/** What the origin gives the API (undefined when another server mounts it): revalidation by group. */
export interface OriginApi {
  revalidate(request: {
    groups?: string[];
    paths?: string[];
    mode?: 'soft' | 'hard';
  }): Promise<unknown>;
}

/** The most carts kept: past it, the cart written longest ago is dropped. */
export const MAX_CARTS = 10_000;
/** Product counts per session, the one written last at the end (Map keeps insertion order). */
const carts = new Map<string, number>();

/** `/api/me`: the visitor's name, made from the session id, and their cart. */
export function me(request: Request): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return jsonError(request, 405, 'GET, HEAD only', { allow: 'GET, HEAD' });
  }
  const sid = sessionOf(request);
  if (sid === undefined) {
    return noSession(request);
  }
  return privateJson(request, 200, {
    name: `Visitor ${sid.slice(0, 4)}`,
    cart: { count: carts.get(sid) ?? 0 },
  } satisfies Me);
}

/**
 * `/api/cart`: GET answers the visitor's count; POST `{ "product": id }` adds one and answers the
 * new count, after revalidating the visitor's cache group at the origin (its greeting part shows
 * the count), so that the next page shows it.
 */
export async function cart(request: Request, origin: OriginApi | undefined): Promise<Response> {
  const read = request.method === 'GET' || request.method === 'HEAD';
  if (!read && request.method !== 'POST') {
    return jsonError(request, 405, 'GET, HEAD, POST only', { allow: 'GET, HEAD, POST' });
  }
  const sid = sessionOf(request);
  if (sid === undefined) {
    return noSession(request);
  }
  if (read) {
    return privateJson(request, 200, { count: carts.get(sid) ?? 0 } satisfies Cart);
  }
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return jsonError(request, 400, 'the body must be JSON: { "product": id }');
  }
  const product = (body as { product?: unknown } | null)?.product;
  if (
    !Number.isInteger(product) ||
    (product as number) < 1 ||
    (product as number) > MAX_PRODUCT_ID
  ) {
    return jsonError(request, 400, `"product" must be a product id from 1 to ${MAX_PRODUCT_ID}`);
  }
  const count = (carts.get(sid) ?? 0) + 1;
  carts.delete(sid);
  carts.set(sid, count);
  if (carts.size > MAX_CARTS) {
    carts.delete(carts.keys().next().value!);
  }
  await origin?.revalidate({ groups: [await visitorGroup(sid)], mode: 'hard' });
  return privateJson(request, 200, { count } satisfies Cart);
}

/** The request's session id, when its first `sid` cookie holds one. */
function sessionOf(request: Request): string | undefined {
  for (const pair of (request.headers.get('cookie') ?? '').split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === 'sid') {
      const sid = pair.slice(equals + 1).trim();
      return isSessionId(sid) ? sid : undefined;
    }
  }
  return undefined;
}

function noSession(request: Request): Response {
  return jsonError(request, 401, 'no session: sign in at /account (the sid cookie)');
}
