// A page's request target read the way Angular's router reads it (@angular/router's
// DefaultUrlSerializer), so that the origin and the router agree on which route a URL names: the
// origin then applies that route's policy, or first sends the visitor to the URL's one spelling.
//
// The router reads `//products/9`, `/products/9/` and `/products/%39` as `/products/9`, and drops
// an empty matrix parameter (`/account;`): spellings of one page, each answered with a 308 to it
// (as Next.js does for a trailing slash), so that caches, logs and the render see one URL per page.
// Matrix parameters (`/account;tab=2`) and auxiliary outlets (`/a(side:b)`) are not spellings: a
// page reads them (ActivatedRoute.paramMap), so they are kept, and the route is matched without them.
import type { Middleware } from 'koa';
import { answer, type Answer, respond } from '../http/answer.ts';
import { OriginError } from '../errors.ts';
import { FILE_LIKE } from './url-path.ts';

/**
 * The one spelling of a page path: empty segments gone (`//a`, `a//b`: the router would stop
 * reading at the second slash), no trailing slash (but on the site root and the `roots` a
 * localized build's base hrefs name, `/fr/`), percent-encoded unreserved characters decoded and
 * other percent-encodings in upper case (RFC 3986 §6.2.2), and no empty matrix parameter (`;`
 * followed by nothing). A path with outlets (`(`, `)`) only loses its extra leading slashes: there
 * a slash before `(` changes which outlet a segment belongs to; with another `//` it has none
 * (undefined). `path` starts with `/`; so does the result, with exactly one.
 */
export function canonicalPath(
  path: string,
  roots: ReadonlySet<string> = NO_ROOTS,
): string | undefined {
  if (!NEEDS_A_LOOK.test(path)) {
    return path;
  }
  if (OUTLETS.test(path)) {
    // Leading slashes, which the router skips, are the only ones that never matter there. Another
    // `//` ends what the router reads, while Angular's engine matches its server routes on what
    // follows too: the two would render and declare different routes.
    const rest = path.replace(/^\/{2,}/, '/');
    return rest.includes('//') ? undefined : rest;
  }
  const segments = path
    .split('/')
    .map((segment) => withoutEmptyMatrix(normalizePercent(segment)))
    .filter((segment) => segment !== '');
  const canonical = `/${segments.join('/')}`;
  return path.endsWith('/') && canonical !== '/' && roots.has(canonical)
    ? `${canonical}/`
    : canonical;
}

/** What a path needs canonicalPath for: `//`, a trailing `/`, `%`, or `;` (quick, no allocation). */
const NEEDS_A_LOOK = /\/\/|.\/$|%|;/;
const OUTLETS = /[()]/;
/** What only the router's parser reads right: matrix parameters, outlets, `//`. */
const PARSER_NEEDED = /[;()]|\/\//;

const NO_ROOTS: ReadonlySet<string> = new Set();

/** `%41` is `A`, `%7e` is `~`; `%2f` is `%2F`: decoded where RFC 3986 says it means the same. */
function normalizePercent(segment: string): string {
  return segment.includes('%')
    ? segment.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
        const char = String.fromCharCode(parseInt(hex, 16));
        return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
      })
    : segment;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** `a;;x=1;` is `a;x=1`: the router reads an empty matrix parameter as none. */
function withoutEmptyMatrix(segment: string): string {
  if (!segment.includes(';')) {
    return segment;
  }
  const [path, ...params] = segment.split(';');
  const kept = params.filter((param) => param !== '');
  return kept.length === 0 ? path : `${path};${kept.join(';')}`;
}

/**
 * The segments Angular's router matches a path against, decoded (`%2F` stays inside its segment),
 * as its URL parser reads them (@angular/router's UrlParser): the primary outlet's, through the
 * primary children of `/a/(b)`, without matrix parameters or other outlets, up to a `//` where the
 * parser stops. Matching is case-sensitive, as the router's. A path the parser refuses (`/;x=1`, an
 * unbalanced `(`) is read as `/`, as the router reads it.
 */
export function routeSegments(path: string): string[] {
  if (!PARSER_NEEDED.test(path)) {
    // The common case, without the parser: the segments between slashes.
    const segments: string[] = [];
    for (const segment of path.split('/')) {
      if (segment !== '') {
        segments.push(decodeSegment(segment));
      }
    }
    return segments;
  }
  try {
    return new UrlReader(path).primarySegments();
  } catch {
    // The router navigates to `/` instead (Router.parseUrl), and so the page is the root's.
    return [];
  }
}

function decodeSegment(raw: string): string {
  if (!raw.includes('%')) {
    return raw;
  }
  try {
    return decodeURIComponent(raw);
  } catch {
    // The guard refuses malformed percent-encoding before a page is looked up; for callers outside
    // a request (tools), the raw segment is the best reading.
    return raw;
  }
}

/** A segment group as the router's parser makes it: its segments and its primary child. */
interface Group {
  segments: string[];
  primary: Group | undefined;
}

/** The outlets of a group: whether it has any, and its primary one. */
interface Outlets {
  any: boolean;
  primary?: Group;
}

/** A segment's path: up to a slash, a parenthesis, `;`, `?` or `#` (the router's SEGMENT_RE). */
const SEGMENT = /^[^/()?;#]*/;
const MATRIX_KEY = /^[^/()?;=#]*/;

/**
 * The part of @angular/router's UrlParser (22.2) that decides the primary outlet's segments,
 * ported line for line so that the origin reads outlets as the router does; the tests compare the
 * two on generated paths (test/server/page-target.test.mjs).
 */
class UrlReader {
  #remaining: string;

  constructor(path: string) {
    this.#remaining = path;
  }

  primarySegments(): string[] {
    while (this.#consume('/')) {
      // the root: any number of slashes
    }
    const segments: string[] = [];
    if (this.#remaining === '') {
      return segments;
    }
    for (let group = this.#children(0).primary; group; group = group.primary) {
      segments.push(...group.segments.filter((segment) => segment !== ''));
    }
    return segments;
  }

  #children(depth: number): Outlets {
    if (depth > 50) {
      throw new Error('URL is too deep');
    }
    if (this.#remaining === '') {
      return { any: false };
    }
    this.#consume('/');
    const segments: string[] = [];
    if (!this.#remaining.startsWith('(')) {
      segments.push(this.#segment());
    }
    while (
      this.#remaining.startsWith('/') &&
      !this.#remaining.startsWith('//') &&
      !this.#remaining.startsWith('/(')
    ) {
      this.#remaining = this.#remaining.slice(1);
      segments.push(this.#segment());
    }
    let children: Outlets = { any: false };
    if (this.#remaining.startsWith('/(')) {
      this.#remaining = this.#remaining.slice(1);
      children = this.#parens(depth);
    }
    let result: Outlets = { any: false };
    if (this.#remaining.startsWith('(')) {
      result = this.#parens(depth);
    }
    // As the router's parser: the segments and child outlets, when any, are the primary group,
    // whatever a sibling `(…)` without an outlet name said.
    if (segments.length > 0 || children.any) {
      result = { any: true, primary: { segments, primary: children.primary } };
    }
    return result;
  }

  #segment(): string {
    const path = SEGMENT.exec(this.#remaining)![0];
    if (path === '' && this.#remaining.startsWith(';')) {
      throw new Error('Empty path url segment cannot have parameters');
    }
    this.#remaining = this.#remaining.slice(path.length);
    while (this.#consume(';')) {
      const key = MATRIX_KEY.exec(this.#remaining)![0];
      if (key === '') {
        continue;
      }
      this.#remaining = this.#remaining.slice(key.length);
      if (this.#consume('=')) {
        this.#remaining = this.#remaining.slice(SEGMENT.exec(this.#remaining)![0].length);
      }
    }
    return decodeSegment(path);
  }

  /** `(…)`: outlets `name:path`, and a path without a name, which the router makes the primary one. */
  #parens(depth: number): Outlets {
    const outlets: Outlets = { any: false };
    this.#consume('(');
    while (!this.#consume(')') && this.#remaining.length > 0) {
      const path = SEGMENT.exec(this.#remaining)![0];
      const next = this.#remaining[path.length];
      if (next !== '/' && next !== ')' && next !== ';') {
        throw new Error('Cannot parse url');
      }
      const named = path.includes(':');
      if (named) {
        this.#remaining = this.#remaining.slice(path.indexOf(':') + 1);
      }
      const children = this.#children(depth + 1);
      outlets.any = true;
      if (!named) {
        outlets.primary = children.primary ?? { segments: [], primary: undefined };
      }
      this.#consume('//');
    }
    return outlets;
  }

  #consume(text: string): boolean {
    if (this.#remaining.startsWith(text)) {
      this.#remaining = this.#remaining.slice(text.length);
      return true;
    }
    return false;
  }
}

/** How long a redirect to a page's one spelling may be kept: it depends on nothing but the URL. */
const REDIRECT_CACHE_CONTROL = 'public, max-age=3600';
const EMPTY = Buffer.alloc(0);

/**
 * canonicalTarget: a GET or HEAD for a page whose path is not its one spelling is sent to it with
 * a `308` (the query string kept as sent), before its hints, its cache lookup or its render.
 * `roots` are the paths that keep a trailing slash: a localized build's locale roots (`/fr/`).
 */
export function canonicalTarget(roots: ReadonlySet<string>): Middleware {
  return (ctx, next) => {
    const { method, path } = ctx;
    if ((method !== 'GET' && method !== 'HEAD') || FILE_LIKE.test(path)) {
      return next();
    }
    const canonical = canonicalPath(path, roots);
    if (canonical === undefined) {
      throw new OriginError('ORIGIN_TARGET_AMBIGUOUS');
    }
    if (canonical === path) {
      return next();
    }
    return respond(ctx, redirectTo(canonical + ctx.search));
  };
}

/** A 308 to `location`, a path that starts with exactly one `/` (never another host). */
export function redirectTo(location: string): Answer {
  if (!location.startsWith('/') || location[1] === '/' || location[1] === '\\') {
    throw new Error(`not a path of this origin: ${JSON.stringify(location)}`);
  }
  return answer(308, ['Location', location, 'Cache-Control', REDIRECT_CACHE_CONTROL], EMPTY, {
    compress: false,
  });
}
