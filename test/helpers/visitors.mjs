// Visitors and URL spellings as properties generate them: requests whose cookies and headers hold
// canaries (values only that request could put into an answer), and the spellings of a path that
// Angular's router may read as it (matrix parameters, percent-encoding, empty segments, trailing
// slashes, case, dot segments, queries, outlets). For the shareability tests at the origin
// (test/server/shareable.test.mjs) and through a real Varnish (test/deploy/varnish.test.mjs).
import fc from 'fast-check';

/** A canary: a value only one visitor's request could put into an answer. */
export const canary = fc.stringMatching(/^[a-z0-9]{8}$/).map((text) => `canary${text}`);

/** A visitor: cookies (a session among them), credentials and headers, each holding a canary. */
export const visitor = fc.record({
  sid: canary,
  currency: fc.oneof(fc.constantFrom('EUR', 'USD', 'GBP', 'JPY'), canary),
  cookies: fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,8}$/), canary), { maxLength: 3 }),
  user: canary,
  authorization: fc.option(canary.map((value) => `Bearer ${value}`)),
  bucket: fc.option(fc.oneof(fc.constantFrom('a', 'b'), canary)),
});

/** A visitor's request headers (`host` when given: a load balancer's Host, the same for all). */
export function headersOf(v, host) {
  const cookie = [
    `sid=${v.sid}`,
    ...v.cookies.map(([name, value]) => `${name}=${value}`),
    `currency=${v.currency}`,
  ].join('; ');
  return {
    ...(host === undefined ? {} : { host }),
    cookie,
    'x-user': v.user,
    ...(v.authorization === null ? {} : { authorization: v.authorization }),
    ...(v.bucket === null ? {} : { 'x-ab-bucket': v.bucket }),
  };
}

/** Every canary a visitor's request holds. */
export function canariesOf(v) {
  return [v.sid, v.currency, v.user, v.authorization, v.bucket, ...v.cookies.map(([, c]) => c)]
    .filter((value) => typeof value === 'string')
    .map((value) => /canary[a-z0-9]{8}/.exec(value)?.[0])
    .filter(Boolean);
}

/** `%XX` of a character, in upper or lower case hex. */
const percent = (char, lower) => {
  const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${lower ? hex : hex.toUpperCase()}`;
};

/**
 * One change to a path's spelling, at a position `at` picks (a segment, a character): each is a way
 * a link, a visitor or an attacker spells a path, most of which the router reads as the path.
 */
const change = fc.oneof(
  fc.constant((p) => `${p}/`),
  fc.constant((p) => `/${p}`),
  fc.nat().map((at) => (p) => splitAt(p, at, (segments, i) => segments.splice(i, 0, ''))),
  fc.tuple(fc.nat(), fc.constantFrom(';', ';;', ';x=1', ';tab=canaryurlmatrix', ';a=1;b')).map(
    ([at, matrix]) =>
      (p) =>
        splitAt(p, at, (segments, i) => (segments[i] += matrix)),
  ),
  fc.tuple(fc.nat(), fc.boolean()).map(([at, lower]) => (p) => {
    const i = 1 + (at % Math.max(p.length - 1, 1));
    return /[A-Za-z0-9._~-]/.test(p[i] ?? '')
      ? p.slice(0, i) + percent(p[i], lower) + p.slice(i + 1)
      : p;
  }),
  fc.nat().map((at) => (p) => {
    const letters = [...p.matchAll(/[a-z]/g)];
    const letter = letters[at % Math.max(letters.length, 1)];
    return letter
      ? p.slice(0, letter.index) + letter[0].toUpperCase() + p.slice(letter.index + 1)
      : p;
  }),
  fc.constant((p) => `${p}%2F6`),
  fc.tuple(fc.nat(), fc.constantFrom('.', '..')).map(
    ([at, dots]) =>
      (p) =>
        splitAt(p, at, (segments, i) => segments.splice(i, 0, dots)),
  ),
  fc.constantFrom('?utm_source=canaryurlquery', '?a=1&b', '?').map((query) => (p) => p + query),
  fc.constant((p) => `${p}(aux:x)`),
);

/** `p` with its segments changed by `edit` at segment `at` (modulo their number). */
function splitAt(p, at, edit) {
  const [path, query = ''] = p.split(/(?=\?)/);
  const segments = path.split('/').slice(1);
  edit(segments, at % Math.max(segments.length, 1));
  return `/${segments.join('/')}${query}`;
}

/** Spellings of a canonical path: the path itself, or up to three changes to it. */
export const spellingOf = (path) =>
  fc.array(change, { maxLength: 3 }).map((changes) => changes.reduce((p, apply) => apply(p), path));
