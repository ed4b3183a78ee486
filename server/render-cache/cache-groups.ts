// HTTP Cache Groups (RFC 9875): the groups a page says it was made from, read from its final
// `Cache-Groups` header (an RFC 8941 List of Strings), and the CDN aliases of that header.

/** The groups kept per page: enough for any real page, and a bound on what a render can make us hold. */
export const MAX_GROUPS = 64;
/** Longer groups are ignored (RFC 9875 asks for at least 32 characters; 256 leaves room for ids). */
export const MAX_GROUP_LENGTH = 256;

/** Headers that carry a page's groups: never on a 304 (send-cached-page.ts, pages.ts). */
export const GROUP_HEADERS: readonly string[] = ['Cache-Groups', 'Surrogate-Key', 'Cache-Tag'];

/**
 * CDN spellings of the same groups, for CDNs that do not read Cache-Groups yet:
 * `surrogate-key` (Fastly: `Surrogate-Key: a b`, space-separated) and `cache-tag`
 * (Cloudflare: `Cache-Tag: a,b`, comma-separated).
 */
export type GroupAlias = 'surrogate-key' | 'cache-tag';
export const GROUP_ALIASES: readonly GroupAlias[] = ['surrogate-key', 'cache-tag'];

/** Whether `group` can be an sf-string: printable ASCII (0x20–0x7E), here also non-empty and bounded. */
export function isGroupName(group: string): boolean {
  return group.length > 0 && group.length <= MAX_GROUP_LENGTH && SF_STRING_CHARS.test(group);
}

const SF_STRING_CHARS = /^[\x20-\x7e]*$/;

/**
 * The groups of a `Cache-Groups` value: the strings of an RFC 8941 List, their parameters ignored.
 * A value that is not a valid List of Strings yields undefined: RFC 9875 says to ignore the whole
 * field then. Past MAX_GROUPS members the rest are ignored; empty or over-long members too.
 */
export function parseCacheGroups(value: string): string[] | undefined {
  const parser = new ListParser(value);
  try {
    return parser.parse();
  } catch {
    return undefined;
  }
}

/**
 * The alias headers (flat: name, value, …) for `groups`. A group with a character the alias
 * separates with (a space for Surrogate-Key, a comma for Cache-Tag) cannot be carried and is left out.
 */
export function aliasHeaders(groups: readonly string[], aliases: readonly GroupAlias[]): string[] {
  const headers: string[] = [];
  for (const alias of aliases) {
    const [name, separator, joiner] =
      alias === 'surrogate-key' ? ['Surrogate-Key', ' ', ' '] : ['Cache-Tag', ',', ','];
    const carried = groups.filter((group) => !group.includes(separator) && group.trim() === group);
    if (carried.length > 0) {
      headers.push(name, carried.join(joiner));
    }
  }
  return headers;
}

/** A strict RFC 8941 §4.2.1 List parser whose members must be Strings (Inner Lists and other items fail). */
class ListParser {
  #i = 0;
  readonly #s: string;

  constructor(value: string) {
    this.#s = value;
  }

  parse(): string[] {
    const groups: string[] = [];
    this.#skip(' \t');
    if (this.#i === this.#s.length) {
      return groups;
    }
    for (;;) {
      const group = this.#string();
      this.#parameters();
      if (groups.length < MAX_GROUPS && group !== '' && group.length <= MAX_GROUP_LENGTH) {
        groups.push(group);
      }
      this.#skip(' \t');
      if (this.#i === this.#s.length) {
        return groups;
      }
      this.#expect(',');
      this.#skip(' \t');
      if (this.#i === this.#s.length) {
        throw new SyntaxError('trailing comma');
      }
    }
  }

  #string(): string {
    this.#expect('"');
    let out = '';
    while (this.#i < this.#s.length) {
      const c = this.#s[this.#i++];
      if (c === '\\') {
        const next = this.#s[this.#i++];
        if (next !== '"' && next !== '\\') {
          throw new SyntaxError('bad escape');
        }
        out += next;
      } else if (c === '"') {
        return out;
      } else if (c < ' ' || c > '~') {
        throw new SyntaxError('not printable ASCII');
      } else {
        out += c;
      }
    }
    throw new SyntaxError('unterminated string');
  }

  /** `;key[=bare-item]`…, read for validity only: RFC 9875 defines no parameter, unknown ones are ignored. */
  #parameters(): void {
    while (this.#s[this.#i] === ';') {
      this.#i++;
      this.#skip(' ');
      this.#match(/[a-z*][a-z0-9_.*-]*/y, 'key');
      if (this.#s[this.#i] === '=') {
        this.#i++;
        this.#bareItem();
      }
    }
  }

  #bareItem(): void {
    const c = this.#s[this.#i];
    if (c === '"') {
      this.#string();
    } else if (c === '?') {
      this.#match(/\?[01]/y, 'boolean');
    } else if (c === ':') {
      this.#match(/:[A-Za-z0-9+/=]*:/y, 'byte sequence');
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      this.#match(/-?\d{1,15}(?:\.\d{1,3})?/y, 'number');
    } else {
      this.#match(/[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]*/y, 'token');
    }
  }

  #match(pattern: RegExp, what: string): void {
    pattern.lastIndex = this.#i;
    const match = pattern.exec(this.#s);
    if (match === null) {
      throw new SyntaxError(`expected a ${what}`);
    }
    this.#i += match[0].length;
  }

  #expect(c: string): void {
    if (this.#s[this.#i] !== c) {
      throw new SyntaxError(`expected ${c}`);
    }
    this.#i++;
  }

  #skip(chars: string): void {
    while (this.#i < this.#s.length && chars.includes(this.#s[this.#i])) {
      this.#i++;
    }
  }
}
