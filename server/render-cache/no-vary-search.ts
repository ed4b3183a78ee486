// No-Vary-Search (draft-ietf-httpbis-no-vary-search): which query parameters of a request select
// another page of a route. The value is a structured-field Dictionary, read by `structured-headers`
// (a maintained RFC 8941/9651 parser, also used for Cache-Groups) and then by the draft's own rules.
import { parseDictionary, type BareItem, type Dictionary } from 'structured-headers';

/**
 * A No-Vary-Search value as the draft's "URL search variance", less key order: either every
 * parameter is ignored but `ignoreAllBut`, or only `ignoreOnly` are.
 */
export type SearchVariance =
  { ignoreAllBut: ReadonlySet<string> } | { ignoreOnly: ReadonlySet<string> };

/**
 * A No-Vary-Search value read by the draft's "parse a URL search variance", or undefined
 * where the draft falls back to its default because the value is not what it specifies: not a
 * structured-field Dictionary, or a member of the wrong type. The members:
 * - `params`: true ignores every parameter, an Inner List of Strings ignores those, false none;
 * - `except`: an Inner List of Strings still significant, only allowed with `params` true;
 * - `key-order`: a Boolean; its meaning does not matter here, as keys sort parameters anyway;
 * - any other member, and the parameters of members and items, are ignored.
 */
export function parseNoVarySearch(value: string): SearchVariance | undefined {
  let dictionary: Dictionary;
  try {
    dictionary = parseDictionary(value);
  } catch {
    return undefined;
  }
  // A member's value without its parameters: a bare item, or an inner list's bare items.
  const member = (name: string): BareItem | BareItem[] | undefined => {
    const found = dictionary.get(name)?.[0];
    return Array.isArray(found) ? found.map(([item]) => item) : found;
  };
  const keyOrder = member('key-order');
  if (keyOrder !== undefined && typeof keyOrder !== 'boolean') {
    return undefined;
  }
  const params = member('params');
  const except = member('except');
  if (params === true) {
    const significant = except === undefined ? new Set<string>() : keys(except);
    return significant && { ignoreAllBut: significant };
  }
  if (except !== undefined) {
    return undefined;
  }
  const ignored = params === undefined || params === false ? new Set<string>() : keys(params);
  return ignored && { ignoreOnly: ignored };
}

/** The keys of an Inner List of Strings, decoded by the draft's "parse a key"; else undefined. */
function keys(value: BareItem | BareItem[]): Set<string> | undefined {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    return undefined;
  }
  return new Set(value.map(parseKey));
}

/**
 * A key as the query's parser reads names (application/x-www-form-urlencoded: `+` is a space, then
 * percent-decoding as UTF-8), so `"caf%C3%A9"` names the `café` URLSearchParams gives cacheKey.
 * `&`, `=` and `?` are escaped first: in a key they are characters, not separators.
 */
function parseKey(key: string): string {
  const escaped = key.replace(/[&=?]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return new URLSearchParams(`${escaped}=`).keys().next().value ?? '';
}

/**
 * The significant parameters of a variance as cacheKey asks for them. A valid value that ignores
 * none (`params=?0`, `params=()`, `key-order` alone) keeps a page per distinct query string, keyed
 * by all its parameters, as the origin has always read it; the draft equates the first two with no
 * header, which for this cache would mean not caching a query string at all.
 */
export function significantParams(variance: SearchVariance): (name: string) => boolean {
  if ('ignoreAllBut' in variance) {
    return (name) => variance.ignoreAllBut.has(name);
  }
  const ignored = variance.ignoreOnly;
  return (name) => !ignored.has(name);
}
