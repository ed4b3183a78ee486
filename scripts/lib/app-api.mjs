// The app's own API (the `api` its server bundle exports, the demo's src/api/) served on a loopback
// port of its own, for what renders the app without the origin in front of it: the stock server and
// the bench's peers, `npm run profile:gc`. Every variant's renders then fetch the same API at the
// same address (API_URL). It counts what it was asked, by path, and can answer late, as a remote
// API does.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { listenOnFreePort } from './ports.mjs';

/**
 * The app's API from its server bundle in `serverDir` (main.server.mjs), or undefined when it has
 * none.
 * @param {string} serverDir
 * @returns {Promise<((request: Request) => Promise<Response | null>) | undefined>}
 */
export async function appApiOf(serverDir) {
  const bundle = await import(pathToFileURL(join(serverDir, 'main.server.mjs')).href);
  return typeof bundle.api === 'function' ? bundle.api : undefined;
}

/**
 * Serves `api` on 127.0.0.1 until `close()`. `delayMs` holds each answer that long; `counts` has
 * every request by path since the start (or the last `reset()`); `url` is what API_URL is set to.
 * @param {(request: Request) => Promise<Response | null>} api
 * @param {{ delayMs?: number }} [options]
 */
export async function serveAppApi(api, { delayMs = 0 } = {}) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    counts.set(path, (counts.get(path) ?? 0) + 1);
    try {
      if (delayMs > 0) await sleep(delayMs);
      const response = await api(requestOf(req, server));
      if (response === null) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":"not the API\'s"}');
        return;
      }
      const headers = Object.fromEntries(response.headers);
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) headers['set-cookie'] = cookies;
      res.writeHead(response.status, headers);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    }
  });
  await listenOnFreePort(server);
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/api`,
    counts,
    /** Requests since the start or the last reset, all paths together. */
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    reset: () => counts.clear(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/** @param {import('node:http').IncomingMessage} req @param {import('node:http').Server} server */
function requestOf(req, server) {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of Array.isArray(value) ? value : [value ?? '']) headers.append(name, one);
  }
  return new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, headers });
}

/**
 * The app's API from `serverDir` served as above, or undefined when the app has none: for tools that
 * start renderers of their own and give each the returned `url` as API_URL.
 * @param {string} serverDir @param {{ delayMs?: number }} [options]
 */
export async function serveAppApiOf(serverDir, options) {
  const api = await appApiOf(serverDir);
  return api && serveAppApi(api, options);
}
