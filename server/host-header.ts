import { isIPv4, isIPv6 } from 'node:net';

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
