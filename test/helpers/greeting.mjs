// The demo's personal part, the product page's greeting: what it says to a signed-in visitor, and
// a way to have the origin render it and keep it before a browser's load.
import assert from 'node:assert/strict';
import { request } from './origin.mjs';

/** What the greeting says to the visitor whose session cookie is `sid`. */
export const welcome = (sid) => `Welcome back, Visitor ${sid.slice(0, 4)}`;

/**
 * Has the origin at `url` render `sid`'s greeting in `path` and keep it (the demo keeps it for its
 * visitor a minute), asked over plain HTTP until it sends it: the browser's load then gets the
 * visitor's part whatever this machine's load, where a render that missed the part's 300 ms on a
 * busy CI machine would send the placeholder (that case is test/server/personal-parts'). At most
 * 10 tries.
 * @param {string} url @param {string} path @param {string} sid
 */
export async function primeGreeting(url, path, sid) {
  for (let tries = 0; tries < 10; tries++) {
    const page = await request(url, path, { headers: { cookie: `sid=${sid}` } });
    if (page.text.includes(welcome(sid))) return;
  }
  assert.fail(`the origin never sent ${sid}'s greeting in ${path}`);
}
