// The Host rules, in one place: what a request's Host (and, behind a trusted proxy,
// X-Forwarded-Host/-Proto) may be, which hosts the origin serves, and the origin
// (`scheme://host[:port]`) a render is made for. Nothing else of the headers reaches a render.
import type { IncomingMessage } from 'node:http';
import { isIP, isIPv4, isIPv6 } from 'node:net';

/** Hosts allowed when NG_ALLOWED_HOSTS is unset. */
export const DEFAULT_ALLOWED_HOSTS = ['localhost', '127.0.0.1'];

/** A DNS name: dot-separated labels of letters, digits and inner dashes, 253 characters at most. */
export const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Whether `pattern` may be an entry of NG_ALLOWED_HOSTS (Angular's format): a host name, an IP
 * address (IPv6 in brackets), `*.example.com` for every subdomain, or `*` for any host.
 */
export function isAllowedHostPattern(pattern: string): boolean {
  if (pattern === '*') {
    return true;
  }
  const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  if (name.startsWith('[') && name.endsWith(']') && !pattern.startsWith('*.')) {
    return isIP(name.slice(1, -1)) === 6;
  }
  return isIP(name) === 4 || HOSTNAME.test(name);
}

/**
 * Whether a request's host name (lower-case, IPv6 in brackets, no port) is one the origin serves.
 * Matches Angular's rules: exact names, `*.example.com` for any subdomain, `*` for anything.
 */
export function createHostCheck(allowedHosts: readonly string[]): (hostname: string) => boolean {
  if (allowedHosts.includes('*')) {
    return () => true;
  }
  const exact = new Set(allowedHosts.filter((host) => !host.startsWith('*.')));
  const suffixes = allowedHosts
    .filter((host) => host.startsWith('*.'))
    .map((host) => host.slice(1));
  return (hostname) =>
    exact.has(hostname) ||
    suffixes.some((suffix) => hostname.endsWith(suffix) && hostname.length > suffix.length);
}

/**
 * `uri-host [ ":" port ]` (RFC 9110 §7.2) for a Host or X-Forwarded-Host value, in canonical form:
 * host name lower-case, IPv6 compressed and in brackets, port as a plain number (1–65535).
 * Returns undefined for anything else — userinfo, path, query, fragment, whitespace, a second
 * value, an empty or out-of-range port — and for hosts the WHATWG URL parser would read
 * differently from the header (`0x7f.1`, `1.2.3.999`, invalid punycode), so the URL handed to
 * the renderer names exactly the host that was checked.
 */
export function parseAuthority(value: string): string | undefined {
  const match = AUTHORITY.exec(value);
  if (match === null) {
    return undefined;
  }
  const [, ipv6, name, port] = match;
  let host: string;
  if (ipv6 !== undefined) {
    if (!isIPv6(ipv6)) {
      return undefined;
    }
    host = `[${ipv6}]`;
  } else {
    host = name.toLowerCase();
    // WHATWG reads a name whose last label is a number as an IPv4 address in any base.
    if (host.length > 253 || (NUMERIC_LABEL.test(host) && !isIPv4(host))) {
      return undefined;
    }
  }
  let canonical: string;
  try {
    canonical = new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
  // Names must already be what the parser makes of them; IPv6 may be written in any valid form.
  if (ipv6 === undefined && canonical !== host) {
    return undefined;
  }
  if (port === undefined) {
    return canonical;
  }
  const number = Number(port);
  return number >= 1 && number <= 65535 ? `${canonical}:${number}` : undefined;
}

/** `http` or `https` in any case, as the only value of X-Forwarded-Proto; otherwise undefined. */
export function parseForwardedProto(value: string): 'http' | 'https' | undefined {
  const proto = value.toLowerCase();
  return proto === 'http' || proto === 'https' ? proto : undefined;
}

/**
 * An IPv6 literal, or a name of letters, digits, `-` and `_` in dot-separated labels (no empty
 * label), then an optional port of digits. RFC 3986's reg-name also allows sub-delims and
 * percent-encoding; no allowed host can contain them, so they are refused as malformed.
 */
const AUTHORITY = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*))(?::(\d+))?$/;
const NUMERIC_LABEL = /(?:^|\.)(?:0x[0-9a-f]*|\d+)$/;

/** How many Host headers a request carries (Node keeps only the first in `headers`). */
export function countHostHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host') {
      count++;
    }
  }
  return count;
}

/** Which hosts the origin serves (NG_ALLOWED_HOSTS), and whether a proxy in front is trusted (TRUST_PROXY). */
export interface HostRules {
  /** Host names a request may name (`*.example.com` and `*` allowed). */
  allowedHosts: readonly string[];
  /** Take protocol and host from X-Forwarded-Proto/Host (still checked against allowedHosts). */
  trustProxy: boolean;
}

/** Why a request names no origin the origin serves: the header at fault, or a host not allowed. */
export type OriginRefusal =
  { malformed: 'Host' | 'X-Forwarded-Host' | 'X-Forwarded-Proto' } | { notAllowed: true };

/**
 * The origins (`scheme://host[:port]`) requests name, from their Host header, or from
 * X-Forwarded-Proto and -Host when a trusted proxy sets them, checked against the allowed hosts.
 *
 * Origins of requests already allowed are remembered by the raw header values they came from, so
 * a hit means the same parse and check would pass again and costs one Map lookup. Only allowed
 * origins are kept, at most 64, so forged values cannot grow it.
 */
export class RequestOrigins {
  readonly #known = new Map<string, string>();
  readonly #trustProxy: boolean;
  readonly #isAllowed: (hostname: string) => boolean;

  constructor({ allowedHosts, trustProxy }: HostRules) {
    this.#trustProxy = trustProxy;
    this.#isAllowed = createHostCheck(allowedHosts);
  }

  /** The origin of a request whose headers were allowed before, else undefined (cheap). */
  known(req: IncomingMessage): string | undefined {
    return this.#known.get(this.#key(req));
  }

  /** The request's allowed origin, or why it has none. */
  resolve(req: IncomingMessage): { origin: string } | OriginRefusal {
    const key = this.#key(req);
    const known = this.#known.get(key);
    if (known !== undefined) {
      return { origin: known };
    }
    const parsed = this.#parse(req);
    if (!('origin' in parsed)) {
      return parsed;
    }
    if (!this.#isAllowed(parsed.hostname)) {
      return { notAllowed: true };
    }
    if (this.#known.size < 64) {
      this.#known.set(key, parsed.origin);
    }
    return { origin: parsed.origin };
  }

  /**
   * Host and, behind a trusted proxy, X-Forwarded-Host and -Proto, each one strict value, or the
   * name of the first that is malformed or missing. An empty forwarded header counts as absent,
   * as in Koa and Angular.
   */
  #parse(
    req: IncomingMessage,
  ):
    | { hostname: string; origin: string }
    | { malformed: 'Host' | 'X-Forwarded-Host' | 'X-Forwarded-Proto' } {
    const host = hostOf(req);
    const authority = host === undefined ? undefined : parseAuthority(host);
    if (authority === undefined) {
      return { malformed: 'Host' };
    }
    let scheme = isEncrypted(req) ? 'https' : 'http';
    let publicAuthority = authority;
    if (this.#trustProxy) {
      // Node joins repeated headers with ", " (a second value, refused below); never an array here.
      const forwardedHost = req.headers['x-forwarded-host'] as string | undefined;
      const forwardedProto = req.headers['x-forwarded-proto'] as string | undefined;
      if (forwardedHost) {
        const parsed = parseAuthority(forwardedHost);
        if (parsed === undefined) {
          return { malformed: 'X-Forwarded-Host' };
        }
        publicAuthority = parsed;
      }
      if (forwardedProto) {
        const parsed = parseForwardedProto(forwardedProto);
        if (parsed === undefined) {
          return { malformed: 'X-Forwarded-Proto' };
        }
        scheme = parsed;
      }
    }
    const { hostname } = new URL(`${scheme}://${publicAuthority}/`);
    return { hostname, origin: `${scheme}://${publicAuthority}` };
  }

  /** Every header value (and the TLS flag) the origin is derived from. */
  #key(req: IncomingMessage): string {
    const { headers } = req;
    // Node joins repeated headers with ", ": strings, never arrays.
    const forwarded = (name: string) => (headers[name] as string | undefined) ?? '';
    // Over HTTP/2 the authority is `:authority` (and a Host, if any, must agree: hostOf).
    const base = `${isEncrypted(req) ? 's' : ''}\n${headers.host ?? ''}\n${forwarded(':authority')}`;
    return this.#trustProxy
      ? `${base}\n${forwarded('x-forwarded-host')}\n${forwarded('x-forwarded-proto')}`
      : base;
  }
}

/**
 * The authority a request names: its Host, or over HTTP/2 its `:authority` (RFC 9113 §8.3.1),
 * which a Host it also carries must repeat; undefined when neither is there or the two differ.
 */
function hostOf(req: IncomingMessage): string | undefined {
  const authority = req.headers[':authority'] as string | undefined;
  const { host } = req.headers;
  if (authority === undefined) {
    return host;
  }
  return host === undefined || host === authority ? authority : undefined;
}

function isEncrypted(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
}
