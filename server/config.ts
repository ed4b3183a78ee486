import { isIP } from 'node:net';

/** The origin's settings, read once at startup from the environment. */
export interface OriginConfig {
  port: number;
  /** Interface to bind; undefined binds every interface, like Node's default. */
  host: string | undefined;
  /** Host names a request may name in its Host header (`*.example.com` and `*` allowed). */
  allowedHosts: string[];
}

/** A setting that cannot be used: its message is one line naming the variable. */
export class ConfigError extends Error {}

export const DEFAULT_PORT = 4000;
export const DEFAULT_ALLOWED_HOSTS = ['localhost', '127.0.0.1'];

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function readConfig(env: NodeJS.ProcessEnv): OriginConfig {
  return {
    port: readPort(env['PORT']),
    host: readHost(env['HOST']),
    allowedHosts: readAllowedHosts(env['NG_ALLOWED_HOSTS']),
  };
}

function readPort(value: string | undefined): number {
  if (value === undefined || value === '') {
    return DEFAULT_PORT;
  }
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535, got "${value}"`);
  }
  return port;
}

function readHost(value: string | undefined): string | undefined {
  if (value === undefined || value === '') {
    return undefined;
  }
  if (isIP(value) === 0 && !HOSTNAME.test(value.toLowerCase())) {
    throw new ConfigError(`HOST must be an IP address or a host name to listen on, got "${value}"`);
  }
  return value;
}

/**
 * Same format as Angular's own NG_ALLOWED_HOSTS: a comma-separated list of host names, where
 * `*.example.com` allows every subdomain of example.com and `*` allows any host.
 */
function readAllowedHosts(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') {
    return DEFAULT_ALLOWED_HOSTS;
  }
  const hosts = value.split(',').map((entry) => entry.trim().toLowerCase());
  for (const host of hosts) {
    if (!isAllowedHostPattern(host)) {
      throw new ConfigError(
        `NG_ALLOWED_HOSTS must be a comma-separated list of host names such as "example.com,*.example.com", ` +
          `got "${host}" in "${value}"`,
      );
    }
  }
  return hosts;
}

function isAllowedHostPattern(host: string): boolean {
  if (host === '*') {
    return true;
  }
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.startsWith('[') && name.endsWith(']') && !host.startsWith('*.')) {
    return isIP(name.slice(1, -1)) === 6;
  }
  return isIP(name) === 4 || HOSTNAME.test(name);
}
