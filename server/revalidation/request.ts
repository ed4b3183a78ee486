// What a revalidation asks for, validated once wherever it comes from: the endpoint's JSON body,
// the app's own call (server.ts revalidate) and a message another process sent.
import { isGroupName, MAX_GROUP_LENGTH } from '../cache/cache-groups.ts';
import {
  REVALIDATION_MODES,
  type Revalidation,
  type RevalidationMode,
} from '../cache/revalidation.ts';

/** A revalidation as asked for: it gets its moment (`at`) when it is applied. */
export type RevalidationRequest = Omit<Revalidation, 'at'>;

/** Paths and groups in one request: enough for a CMS's bulk publish, bounded for the scan it costs. */
export const MAX_ITEMS = 1000;
export const MAX_PATH_LENGTH = 2048;

const KNOWN = new Set(['paths', 'groups', 'mode']);
/**
 * An absolute path of visible ASCII: no query, fragment or backslash (and so no control character,
 * space or anything a cache key cannot hold).
 */
const PATH = /^\/[!-~]*$/;
const NOT_IN_PATH = /[?#\\]/;

/**
 * The request `json` describes, or `{ error }` with a message fit for a 400 answer (it never
 * repeats more than a short piece of the input). `empty`: no path or group is fine (a message
 * between processes that names data keys alone).
 */
export function parseRevalidationRequest(
  json: unknown,
  { empty = false }: { empty?: boolean } = {},
): { request: RevalidationRequest } | { error: string } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { error: 'the body must be a JSON object such as {"groups": ["product-42"]}' };
  }
  const record = json as Record<string, unknown>;
  const unknown = Object.keys(record).find((name) => !KNOWN.has(name));
  if (unknown !== undefined) {
    return { error: `unknown property ${quote(unknown)}: only paths, groups and mode` };
  }
  const paths = stringList(record['paths'], 'paths');
  if ('error' in paths) {
    return paths;
  }
  const groups = stringList(record['groups'], 'groups');
  if ('error' in groups) {
    return groups;
  }
  const mode = record['mode'] ?? 'soft';
  if (!REVALIDATION_MODES.includes(mode as RevalidationMode)) {
    // A string is quoted once; anything else (a number, an object) is shown as its JSON.
    const shown = typeof mode === 'string' ? quote(mode) : quote(String(JSON.stringify(mode)));
    return { error: `mode must be "soft" or "hard", got ${shown}` };
  }
  const items = paths.list.length + groups.list.length;
  if (items === 0 && !empty) {
    return { error: 'nothing to revalidate: give at least one path or group' };
  }
  if (items > MAX_ITEMS) {
    return { error: `too many items: ${items} paths and groups, at most ${MAX_ITEMS}` };
  }
  const badPath = paths.list.find(
    (path) => path.length > MAX_PATH_LENGTH || !PATH.test(path) || NOT_IN_PATH.test(path),
  );
  if (badPath !== undefined) {
    return {
      error: `paths must be absolute paths such as "/products/42" (no query, fragment, space, control or non-ASCII character; at most ${MAX_PATH_LENGTH} characters), got ${quote(badPath)}`,
    };
  }
  const badGroup = groups.list.find((group) => !isGroupName(group));
  if (badGroup !== undefined) {
    return {
      error: `groups must be non-empty printable ASCII of at most ${MAX_GROUP_LENGTH} characters, got ${quote(badGroup)}`,
    };
  }
  return {
    request: {
      paths: [...new Set(paths.list)],
      groups: [...new Set(groups.list)],
      mode: mode as RevalidationMode,
    },
  };
}

function stringList(value: unknown, name: string): { list: string[] } | { error: string } {
  if (value === undefined) {
    return { list: [] };
  }
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    return { error: `${name} must be an array of strings` };
  }
  return { list: value as string[] };
}

/** A short, printable rendering of untrusted input for an error message. */
function quote(value: string): string {
  const short = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return JSON.stringify(short);
}

/**
 * A revalidation the app's own code asks for (revalidate() of server.ts, the API's
 * `origin.revalidate`), checked as the endpoint checks its body: a TypeError says what is wrong.
 */
export function checkedRevalidation(request: unknown): RevalidationRequest {
  const parsed = parseRevalidationRequest(request);
  if ('error' in parsed) {
    throw new TypeError(`revalidate: ${parsed.error}`);
  }
  return parsed.request;
}
