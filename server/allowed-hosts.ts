/**
 * Whether a request's host name (lower-case, IPv6 in brackets, no port) is one the origin serves.
 * Matches Angular's rules: exact names, `*.example.com` for any subdomain, `*` for anything.
 */
export function createHostCheck(allowedHosts: readonly string[]): (hostname: string) => boolean {
  if (allowedHosts.includes('*')) {
    return () => true;
  }
  const exact = new Set(allowedHosts.filter((host) => !host.startsWith('*.')));
  const suffixes = allowedHosts.filter((host) => host.startsWith('*.')).map((host) => host.slice(1));
  return (hostname) =>
    exact.has(hostname) || suffixes.some((suffix) => hostname.endsWith(suffix) && hostname.length > suffix.length);
}
