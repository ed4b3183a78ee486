// The personal parts an app declares (its bundle's `personalParts`, the map it gives
// providePersonalParts in src/app/personal-part.ts): what each part's render may see of the
// visitor's request, how long a visitor's part may be reused for that visitor, how long its render
// may take. Read once at startup, every value checked: a bad declaration stops the start in one line.
import { StartupError } from '../../startup-error.ts';

/** What the origin keeps of a part's declaration. */
export interface PartRule {
  name: string;
  /** The cookies its render sees; a request carrying none of them is anonymous: the placeholder. */
  cookies: readonly string[];
  /** The request headers its render sees (lower case). */
  headers: readonly string[];
  /** How long a visitor's rendered part may be reused for that same visitor; 0: never kept. */
  maxAgeMs: number;
  /** How long its render may take before its placeholder goes out instead. */
  timeoutMs: number;
}

/** A part's render may take this long unless it says otherwise (and never longer than a page's). */
export const DEFAULT_PART_TIMEOUT_MS = 300;
/** The longest a visitor's part is kept: a day. */
const MAX_AGE_SECONDS = 86_400;
/** A part's name: it travels in markers, URLs and metric labels. */
const PART_NAME = /^[a-z][a-z0-9-]{0,62}$/;
/** An RFC 6265 cookie name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/;

export type PartRules = ReadonlyMap<string, PartRule>;

/**
 * The declarations of `exported` (the bundle's `personalParts`), or undefined when the app has
 * none. Throws a StartupError naming the first bad entry.
 */
export function readPartRules(exported: unknown, pageTimeoutMs: number): PartRules | undefined {
  if (exported === undefined) {
    return undefined;
  }
  if (exported === null || typeof exported !== 'object' || Array.isArray(exported)) {
    throw new StartupError('the app bundle exports personalParts that is not a map of parts');
  }
  const rules = new Map<string, PartRule>();
  for (const [name, declared] of Object.entries(exported as Record<string, unknown>)) {
    rules.set(name, ruleOf(name, declared, pageTimeoutMs));
  }
  return rules.size === 0 ? undefined : rules;
}

function ruleOf(name: string, declared: unknown, pageTimeoutMs: number): PartRule {
  const bad = (what: string) =>
    new StartupError(`personal part ${JSON.stringify(name)}: ${what} (src/app/personal-part.ts)`);
  if (!PART_NAME.test(name)) {
    throw bad('a part name is a lowercase letter, then up to 62 of a-z, 0-9 and -');
  }
  if (declared === null || typeof declared !== 'object') {
    throw bad('its declaration is not an object');
  }
  const { cookies, headers = [], maxAge = 0, timeoutMs } = declared as Record<string, unknown>;
  if (!Array.isArray(cookies) || cookies.length === 0 || !cookies.every(isToken)) {
    throw bad('cookies must name at least one cookie, each a token (RFC 6265)');
  }
  if (!Array.isArray(headers) || !headers.every((h) => isToken(h) && h === h.toLowerCase())) {
    throw bad('headers must be lowercase header names');
  }
  if (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0) {
    throw bad(`maxAge must be a whole number of seconds from 0 to ${MAX_AGE_SECONDS}`);
  }
  if (maxAge > MAX_AGE_SECONDS) {
    throw bad(`maxAge must be a whole number of seconds from 0 to ${MAX_AGE_SECONDS}`);
  }
  const timeout = timeoutMs ?? DEFAULT_PART_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
    throw bad('timeoutMs must be a whole number of milliseconds, at least 1');
  }
  return {
    name,
    cookies: [...new Set(cookies)],
    headers: [...new Set(headers as string[])],
    maxAgeMs: maxAge * 1000,
    // Never longer than a page's render may take (RENDER_TIMEOUT_MS, which operators set).
    timeoutMs: Math.min(timeout, pageTimeoutMs),
  };
}

function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN.test(value);
}
