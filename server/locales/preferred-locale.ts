// Which of a build's locales a visitor prefers, from Accept-Language (RFC 9110 §12.5.4), matched
// as Angular's own server matches it (@angular/ssr 22.2 getPreferredLocale), so that the origin
// redirects the site root where Angular's server would: an exact tag first, then a supported
// locale sharing the language, in the order of the visitor's q-values; a tag with q=0 is never
// chosen; otherwise the first supported locale (the source locale). Node bounds the header (16 KiB).

/** The supported locale `header` prefers; `supported[0]` (the source locale) when none matches. */
export function preferredLocale(header: string | undefined, supported: readonly string[]): string {
  // No header, or an empty one, is any language (Angular's server reads it so).
  const wanted = parseAcceptLanguage(header === undefined || header === '' ? '*' : header);
  if (
    supported.length < 2 ||
    wanted.length === 0 ||
    (wanted.length === 1 && wanted[0].tag === '*')
  ) {
    return supported[0];
  }
  const byLowerCase = new Map(supported.map((locale) => [locale.toLowerCase(), locale]));
  const refused = new Set<string>();
  let languageMatch: string | undefined;
  for (const { tag: raw, q } of wanted) {
    const tag = raw.toLowerCase();
    if (q === 0) {
      refused.add(tag);
      continue;
    }
    const exact = byLowerCase.get(tag);
    if (exact !== undefined) {
      return exact;
    }
    // An empty tag (a stray comma) matches every locale's language, as in Angular's server.
    const language = tag.split('-', 1)[0];
    languageMatch ??= [...byLowerCase].find(([lower]) => lower.startsWith(language))?.[1];
  }
  return (
    languageMatch ?? [...byLowerCase].find(([lower]) => !refused.has(lower))?.[1] ?? supported[0]
  );
}

/**
 * The tags of an Accept-Language value by descending q, as Angular's server orders them: sorted
 * first (a stable sort), then one entry per tag where its first sorted occurrence stands, with its
 * last q. A missing, malformed or out-of-range q counts as 1.
 */
function parseAcceptLanguage(header: string): { tag: string; q: number }[] {
  if (header === '*') {
    return [{ tag: '*', q: 1 }];
  }
  const sorted = header
    .split(',')
    .map((part) => {
      const [tag, parameter] = part.split(';', 2).map((text) => text.trim());
      const value = parameter?.startsWith('q=') ? Number.parseFloat(parameter.slice(2)) : NaN;
      return { tag, q: value >= 0 && value <= 1 ? value : 1 };
    })
    .sort((a, b) => b.q - a.q);
  const tags = new Map<string, number>();
  for (const { tag, q } of sorted) {
    tags.set(tag, q);
  }
  return [...tags].map(([tag, q]) => ({ tag, q }));
}
