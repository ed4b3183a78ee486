// HTTP Cache Groups (RFC 9875): the groups a page says it was made from, read from its final
// `Cache-Groups` header (an RFC 8941 List of Strings), and the CDN aliases of that header.
import { parseList, serializeList } from 'structured-headers';

/** The groups kept per page: enough for any real page, and a bound on what a render can make us hold. */
export const MAX_GROUPS = 64;
/** Longer groups are ignored (RFC 9875 asks for at least 32 characters; 256 leaves room for ids). */
export const MAX_GROUP_LENGTH = 256;

/**
 * CDN spellings of the same groups, for CDNs that do not read Cache-Groups yet:
 * `surrogate-key` (Fastly: `Surrogate-Key: a b`, space-separated), `cache-tag` (Cloudflare:
 * `Cache-Tag: a,b`, comma-separated) and `xkey` (Varnish's xkey vmod, deploy/varnish: every group
 * as its tag, and the page's path as one more: see groupTag and pathTag).
 */
export type GroupAlias = 'surrogate-key' | 'cache-tag' | 'xkey';
export const GROUP_ALIASES: readonly GroupAlias[] = ['surrogate-key', 'cache-tag', 'xkey'];

/**
 * A group as a CDN tag and in a purge URL, one spelling for both: percent-encoded as
 * encodeURIComponent does, so that it holds no separator of a tag list (a space, a comma), no `/`
 * and nothing a URL changes. `api:product-7` is `api%3Aproduct-7` in the tag and in the URL alike,
 * which a CDN that compares them as they are (Varnish's xkey) needs.
 */
export function groupTag(group: string): string {
  return encodeURIComponent(group);
}

/**
 * A page's path as a CDN tag: `path:` and the path percent-encoded. The bare `:` is what no
 * groupTag holds (it encodes every colon), so a path's tag never meets a group's.
 */
export function pathTag(path: string): string {
  return `path:${encodeURIComponent(path)}`;
}

/** Whether `group` can be an sf-string: printable ASCII (0x20–0x7E), here also non-empty and bounded. */
export function isGroupName(group: string): boolean {
  return group.length > 0 && group.length <= MAX_GROUP_LENGTH && SF_STRING_CHARS.test(group);
}

const SF_STRING_CHARS = /^[\x20-\x7e]*$/;

/**
 * The groups of a `Cache-Groups` value: the strings of an RFC 8941 List (read by
 * `structured-headers`), their parameters ignored. A value that is not a valid List of Strings
 * yields undefined: RFC 9875 says to ignore the whole field then. Past MAX_GROUPS members the rest
 * are ignored; empty or over-long members too.
 */
export function parseCacheGroups(value: string): string[] | undefined {
  let list: ReturnType<typeof parseList>;
  try {
    list = parseList(value);
  } catch {
    return undefined;
  }
  const groups: string[] = [];
  for (const [item] of list) {
    // An sf-string is a JS string; tokens, numbers, byte sequences and inner lists are not.
    if (typeof item !== 'string') {
      return undefined;
    }
    if (groups.length < MAX_GROUPS && item !== '' && item.length <= MAX_GROUP_LENGTH) {
      groups.push(item);
    }
  }
  return groups;
}

/**
 * The alias headers (flat: name, value, …) for `groups` of a page at `path`. A group with a
 * character the alias separates with (a space for Surrogate-Key, a comma for Cache-Tag) cannot be
 * carried and is left out; xkey carries every group and the path, as tags (groupTag, pathTag).
 */
export function aliasHeaders(
  groups: readonly string[],
  aliases: readonly GroupAlias[],
  path?: string,
): string[] {
  const headers: string[] = [];
  for (const alias of aliases) {
    if (alias === 'xkey') {
      const tags = groups.map(groupTag);
      if (path !== undefined) {
        tags.push(pathTag(path));
      }
      if (tags.length > 0) {
        headers.push('xkey', tags.join(' '));
      }
      continue;
    }
    const [name, separator, joiner] =
      alias === 'surrogate-key' ? ['Surrogate-Key', ' ', ' '] : ['Cache-Tag', ',', ','];
    const carried = groups.filter((group) => !group.includes(separator) && group.trim() === group);
    if (carried.length > 0) {
      headers.push(name, carried.join(joiner));
    }
  }
  return headers;
}

/** A merged Cache-Groups value stays below what CDNs take in one header (about 16 KB). */
const MAX_HEADER_LENGTH = 8 * 1024;

/**
 * A `Cache-Groups` value of `groups` (an RFC 8941 List of Strings), at most MAX_GROUPS of them and
 * MAX_HEADER_LENGTH characters: those past either bound are left out.
 */
export function serializeCacheGroups(groups: Iterable<string>): string {
  const kept: string[] = [];
  let length = 0;
  for (const group of groups) {
    if (kept.length === MAX_GROUPS || !isGroupName(group)) {
      continue;
    }
    const item = serializeList([[group, new Map()]]);
    if (length + item.length + 2 > MAX_HEADER_LENGTH) {
      break;
    }
    kept.push(group);
    length += item.length + 2;
  }
  return serializeList(kept.map((group) => [group, new Map()]));
}
