// Where a render's request for the app's own API goes. When API_URL is the origin's own address
// (api-url.ts set it), the request is sent to this process's private listener instead
// (process/api-listener.ts): plain HTTP on loopback, answered by the same request listener. So with
// TLS_CERT no certificate is checked for 127.0.0.1 (none names it), a cluster worker's request stays
// with the worker, and a render still in flight while the public port drains reaches the API.
// The URL itself stays API_URL's: what the data cache keys by (shared through Redis with every
// process), traces name and the transfer cache maps is the same in every worker and replica,
// whatever port each process's private listener got.
import { isApiPath } from './api-path.ts';

/** API_URL's origin, and the private listener's that answers for it. */
let route: { from: string; to: string } | undefined;

/**
 * From now on, requests for the API at `apiUrl` (`https://127.0.0.1:4000/api`) go to `via`
 * (`http://127.0.0.1:<port>`), path and query as they are.
 */
export function routeOwnApi(apiUrl: string, via: string): void {
  route = { from: new URL(apiUrl).origin, to: new URL(via).origin };
}

/**
 * `fetch` for the data cache's requests: one for the app's own API goes to the private listener, any
 * other as it came.
 */
export function ownApiFetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => {
    const target = route && rerouted(urlOf(input), route);
    return target === undefined
      ? fetch(input, init)
      : fetch(new Request(target, new Request(input, init)));
  };
}

function urlOf(input: RequestInfo | URL): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** The private listener's URL for `url` when it is one of the API's at the route's origin. */
function rerouted(url: string, { from, to }: { from: string; to: string }): string | undefined {
  if (!url.startsWith(from) || url.charAt(from.length) !== '/') {
    return undefined;
  }
  const target = url.slice(from.length);
  return isApiPath(target) ? `${to}${target}` : undefined;
}
