// Where renders reach the app's API when API_URL does not say: this process's own address. The
// app reads API_URL (src/app/api-url.ts); a port of the origin's own choosing (PORT=0), a HOST it
// binds, `ng serve`'s port are known only here, once the server listens, so the origin says it.
// The production origin then sends its renders' requests for that address to a private listener
// (api-route.ts): the address names the API, the listener carries the requests.

/** The loopback address that reaches a server bound to `address` (a wildcard: 127.0.0.1). */
export function loopbackHost(address: string): string {
  const wildcard = address === '' || address === '::' || address === '0.0.0.0';
  if (wildcard || address === '::ffff:0.0.0.0') {
    return '127.0.0.1';
  }
  const v4 = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return v4.includes(':') ? `[${v4}]` : v4;
}

/** Whether API_URL is set: then it is the user's, and the origin leaves it and its address alone. */
export function apiUrlGiven(env: NodeJS.ProcessEnv): boolean {
  return env['API_URL'] !== undefined && env['API_URL'] !== '';
}

/**
 * Sets API_URL to `scheme://<loopback>:<port>/api` unless it is set; returns what it set, or
 * undefined when API_URL was already there.
 */
export function defaultApiUrl(
  env: NodeJS.ProcessEnv,
  where: { scheme: 'http' | 'https'; address: string; port: number },
): string | undefined {
  if (apiUrlGiven(env)) {
    return undefined;
  }
  const url = `${where.scheme}://${loopbackHost(where.address)}:${where.port}/api`;
  env['API_URL'] = url;
  return url;
}
