// The demo's signed-in visitor, shared by the API (src/api/visitors.ts) and the greeting part
// (visitor-greeting.ts). The session is a plain `sid` cookie the account page sets; a real one
// would be an HttpOnly cookie a sign-in sets.

/**
 * What the API answers at GET /api/me: who the visitor is and their cart, in one answer, so that
 * the greeting part asks one request for all it shows (each request a part's render makes costs
 * the origin about 2 ms of CPU: docs/personal-parts.md, "What it costs").
 */
export interface Me {
  name: string;
  cart: Cart;
}

/** What the API answers at GET and POST /api/cart. */
export interface Cart {
  count: number;
}

/** A session id the demo accepts: 1 to 64 letters, digits, `-` or `_`. */
export function isSessionId(sid: string | undefined): sid is string {
  return sid !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(sid);
}

/**
 * The cache group of everything rendered for this session (its greeting part): `visitor-` and the
 * first 16 hex characters of the sid's SHA-256, never the sid itself, since groups are sent in
 * headers and revalidation requests. The API revalidates it after a change to the visitor's cart.
 */
export async function visitorGroup(sid: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(sid));
  const hex = Array.from(new Uint8Array(digest, 0, 8), (byte) =>
    byte.toString(16).padStart(2, '0'),
  ).join('');
  return `visitor-${hex}`;
}
