import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { contentType } from 'mime-types';
import { noncedAnswer } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { answer, type Answer, REVALIDATE } from '../http/answer.ts';
import type { Coding } from '../http/content-coding.ts';
import { withEncodings, withGzipAroundSlots } from '../http/encodings.ts';
import { deflatePiecesNow } from '../http/gzip-slots.ts';
import { strongEtag } from '../http/entity-tag.ts';
import type { PageHints } from '../hints/page-hints.ts';
import { type LocaleMap, pageLanguage, pathInSite, siteOf } from '../locales/locale-sites.ts';

/**
 * A file answered from memory: its bytes and every header, computed once at startup, with the
 * build's compressed copies as its stored codings. An HTML page under a Content-Security-Policy
 * holds nonce placeholders, filled (and compressed) per response.
 */
export type StaticFile = Answer;

/** A file over the memory limits, served from disk by koa-static. */
export interface DiskFile {
  /** The codings of the `.br` and `.gz` copies the build holds of it: if any, answers vary with Accept-Encoding. */
  codings: readonly Coding[];
}

export interface StaticIndex {
  /** The file for a URL path (prerendered routes included), if held in memory. */
  get(path: string): StaticFile | undefined;
  /**
   * The file for a request target taken verbatim, if it is a path that needs no decoding or
   * normalizing (no '%', '\\', '?' or '#'): a hit means the target is exactly that file's path.
   */
  verbatim(target: string): StaticFile | undefined;
  /** A file or prerendered page not held in memory (koa-static serves it), if the path names one. */
  onDisk(path: string): DiskFile | undefined;
  /** Cache-Control of a file of the build by its URL path, also one served from disk. */
  cacheControl(urlPath: string): string;
}

/** Precompressed copies a build step writes next to a file (files/compress-build.ts), best first. */
export const COPIES: readonly { coding: 'br' | 'gzip'; extension: string }[] = [
  { coding: 'br', extension: '.br' },
  { coding: 'gzip', extension: '.gz' },
];

export interface StaticIndexOptions {
  /** Files up to this size are held in memory (default 1 MiB). */
  maxFileBytes?: number;
  /** Bytes held in memory in all; files past it are served from disk (default 64 MiB, 0 for none). */
  maxTotalBytes?: number;
  /** HTML files get a fresh nonce per response under this policy (csp/). */
  csp?: ContentSecurityPolicy;
  /** Prerendered pages carry their hints in `Link` (hints/page-hints.ts); undefined: none. */
  hints?: PageHints;
  /**
   * A localized build's locales: each locale's files are under its prefix (`/fr/…`), its HTML
   * carries Content-Language and its prerendered pages their alternates; undefined: a plain build.
   */
  locales?: LocaleMap;
  /** The URL paths this process serves files of (LOCALES: its locales' folders); undefined: all. */
  serves?: (urlPath: string) => boolean;
}

/**
 * Immutable for a year: the file name changes whenever the content does. No `public`: it only
 * lets shared caches reuse answers to requests that carry Authorization (RFC 9111 §3.5), which
 * nobody sends for the build's files; REDbot flags it as unnecessary.
 */
export const HASHED_ASSET_CACHE = 'max-age=31536000, immutable';
/**
 * Bundles the application builder names `name-HASH.js|css` (outputHashing "all"), and the files it
 * copies to media/ with hashed names. Files from public/ keep their names and are revalidated.
 */
export const HASHED_NAME =
  /-[A-Za-z0-9_-]{8}\.(?:js|mjs|css)$|^\/media\/[^/]+-[A-Za-z0-9_-]{8}\.\w+$/;

/** A path of only unreserved characters and sub-delims: the same string before and after decoding. */
const PLAIN_PATH = /^\/[\w\-.~!$&'()*+,;=:@/]*$/;

/** The Content-Type of a file of the build, by its name. */
export function typeOf(urlPath: string): string {
  return contentType(urlPath.slice(urlPath.lastIndexOf('/') + 1)) || 'application/octet-stream';
}

/** Cache-Control for a file of the build, by its URL path (within its locale's, in a localized build). */
export function cacheControlFor(urlPath: string): string {
  return HASHED_NAME.test(urlPath) ? HASHED_ASSET_CACHE : REVALIDATE;
}

/**
 * Indexes the browser build once at startup. Requests for files and prerendered pages then cost a
 * Map lookup: no fs call, no hashing, no MIME lookup, no regex. The build never changes under a
 * running server, so nothing here is ever invalidated.
 */
export function buildStaticIndex(
  browserDir: string,
  prerenderedRoutes: readonly string[],
  {
    maxFileBytes = 1024 * 1024,
    maxTotalBytes = 64 * 1024 * 1024,
    csp,
    hints,
    locales,
    serves,
  }: StaticIndexOptions = {},
): StaticIndex {
  const files = new Map<string, StaticFile>();
  const largeFiles = new Map<string, DiskFile>();
  const listed = listBuild(browserDir, serves);
  const { read, bodies, held } = bodyReader(listed);
  const linkOf = pageLinks(prerenderedRoutes, hints);
  const headOf = fileHeads(prerenderedRoutes, linkOf, locales);

  for (const [urlPath, { size, mtime }] of listed) {
    const siblings = COPIES.filter(({ extension }) => listed.has(urlPath + extension));
    // A file and its compressed copies are held together or not at all.
    const groupPaths = [urlPath, ...siblings.map(({ extension }) => urlPath + extension)];
    const unreadBytes = groupPaths.reduce(
      (sum, path) => sum + (bodies.has(path) ? 0 : listed.get(path)!.size),
      0,
    );
    const head = headOf(urlPath);
    const { type } = head;
    if (csp && type.startsWith('text/html')) {
      // Under a policy, HTML is always held (koa-static could not give it a nonce), and compressed
      // per response: the build's copies cannot take one either.
      files.set(urlPath, noncedFile(read(urlPath), mtime, head, csp));
      continue;
    }
    if (size > maxFileBytes || held() + unreadBytes > maxTotalBytes) {
      largeFiles.set(urlPath, { codings: siblings.map(({ coding }) => coding) });
      continue;
    }
    const file = staticFile(read(urlPath), mtime, head, siblings.length > 0);
    files.set(
      urlPath,
      siblings.length === 0
        ? file
        : withEncodings(
            file,
            siblings.map(({ coding, extension }) => [coding, read(urlPath + extension)]),
          ),
    );
  }

  addPrerenderedRoutes(prerenderedRoutes, files, largeFiles, locales);
  const verbatim = new Map([...files].filter(([path]) => PLAIN_PATH.test(path)));
  return {
    get: (path) => files.get(path.includes('%') ? safeDecode(path) : path),
    verbatim: (target) => verbatim.get(target),
    onDisk: (path) => largeFiles.get(path.includes('%') ? safeDecode(path) : path),
    cacheControl: cacheControlIn(locales),
  };
}

/** The headers of a file's answer that depend on its path. */
interface FileHead {
  type: string;
  cacheControl: string;
  /** `Link` of a prerendered page: its hints, its alternates in a localized build; else undefined. */
  link: string | undefined;
  /** `Content-Language` of an HTML file in a localized build, else undefined. */
  language: string | undefined;
}

/** Cache-Control by URL path, in a localized build read within its locale (`/fr/media/…` is hashed). */
function cacheControlIn(locales: LocaleMap | undefined): (urlPath: string) => string {
  return (urlPath) => {
    const site = locales && siteOf(locales.sites, urlPath);
    return cacheControlFor(site ? pathInSite(site, urlPath) : urlPath);
  };
}

/** Each file's head; in a localized build, read within its locale. */
function fileHeads(
  routes: readonly string[],
  linkOf: (urlPath: string) => string | undefined,
  locales: LocaleMap | undefined,
): (urlPath: string) => FileHead {
  const routeOfPage = new Map(routes.map((route) => [pageFile(route), route]));
  const cacheControl = cacheControlIn(locales);
  return (urlPath) => {
    const type = typeOf(urlPath);
    const site = locales && siteOf(locales.sites, urlPath);
    const head: FileHead = {
      type,
      cacheControl: cacheControl(urlPath),
      link: linkOf(urlPath),
      language: undefined,
    };
    if (site === undefined || !type.startsWith('text/html')) {
      return head;
    }
    const route = routeOfPage.get(urlPath);
    const { language, alternates } = pageLanguage(locales!, route ?? site.prefix)!;
    head.language = language;
    if (route !== undefined) {
      head.link = head.link === undefined ? alternates : `${head.link}, ${alternates}`;
    }
    return head;
  };
}

/** `Content-Language` and `Link`, when the file has them. */
function pageHeaders(head: FileHead): string[] {
  return [
    ...(head.language === undefined ? [] : ['Content-Language', head.language]),
    ...(head.link === undefined ? [] : ['Link', head.link]),
  ];
}

/** The `Link` of the page file of each prerendered route (`/about` is about/index.html). */
function pageLinks(
  routes: readonly string[],
  hints: PageHints | undefined,
): (urlPath: string) => string | undefined {
  const links = new Map<string, string | undefined>(
    hints === undefined ? [] : routes.map((route) => [pageFile(route), hints.header(route)]),
  );
  return (urlPath) => links.get(urlPath);
}

function pageFile(route: string): string {
  return route === '/' ? '/index.html' : `${route}/index.html`;
}

/** Every file of the build (that this process serves) by its URL path, with where it is, its size and its time. */
function listBuild(
  browserDir: string,
  serves: ((urlPath: string) => boolean) | undefined,
): Map<string, { path: string; size: number; mtime: Date }> {
  const listed = new Map<string, { path: string; size: number; mtime: Date }>();
  for (const path of listFiles(browserDir)) {
    const urlPath = '/' + relative(browserDir, path).split(sep).join('/');
    if (serves === undefined || serves(urlPath)) {
      const { size, mtime } = statSync(path);
      listed.set(urlPath, { path, size, mtime });
    }
  }
  return listed;
}

/**
 * Reads a file of the build once and counts its bytes once, also when a `.br` copy is both a file
 * of its own and the compressed form of another. Files with the same bytes share one buffer: a
 * localized build repeats its stylesheet, media and most chunks in every locale's folder.
 */
function bodyReader(listed: Map<string, { path: string }>) {
  const bodies = new Map<string, Buffer>();
  const byDigest = new Map<string, Buffer>();
  let heldBytes = 0;
  const read = (urlPath: string): Buffer => {
    let body = bodies.get(urlPath);
    if (body === undefined) {
      const bytes = readFileSync(listed.get(urlPath)!.path);
      const digest = createHash('sha256').update(bytes).digest('base64');
      body = byDigest.get(digest);
      if (body === undefined) {
        body = bytes;
        byDigest.set(digest, body);
        heldBytes += body.length;
      }
      bodies.set(urlPath, body);
    }
    return body;
  };
  return { read, bodies: bodies as ReadonlyMap<string, Buffer>, held: () => heldBytes };
}

/**
 * A prerendered route answers with its page: `/` is index.html, `/about` is about/index.html. A
 * locale's root answers at `/fr/` too: a localized build links to its home as its base href. Any
 * other `/about/` is not a spelling the origin serves a page at: it is sent to `/about`
 * (request/page-target.ts), as every page is to its one spelling.
 */
function addPrerenderedRoutes(
  routes: readonly string[],
  files: Map<string, StaticFile>,
  largeFiles: Map<string, DiskFile>,
  locales: LocaleMap | undefined,
): void {
  const roots = new Set(locales?.sites.map(({ prefix }) => prefix));
  for (const route of routes) {
    const pagePath = pageFile(route);
    const page = files.get(pagePath);
    const paths = roots.has(route) ? [route, `${route}/`] : [route];
    for (const path of paths) {
      if (page) {
        files.set(path, page);
      } else if (largeFiles.has(pagePath)) {
        largeFiles.set(path, largeFiles.get(pagePath)!);
      }
    }
  }
}

/**
 * A file as it is, with every header it is answered with. `encoded`: the build holds compressed
 * copies, attached as its codings (each with its own ETag); without them it is sent as it is,
 * never compressed per request.
 */
function staticFile(body: Buffer, mtime: Date, head: FileHead, encoded: boolean): StaticFile {
  const validators = { etag: strongEtag(body), 'last-modified': mtime.toUTCString() };
  const headers = [
    'Content-Type',
    head.type,
    'Cache-Control',
    head.cacheControl,
    'ETag',
    validators.etag,
    'Last-Modified',
    validators['last-modified'],
    // Whole files only: nothing in a browser build needs byte ranges (docs/architecture.md, HTTP behaviour).
    'Accept-Ranges',
    'none',
    ...pageHeaders(head),
  ];
  // Caches must key a file that has compressed copies by Accept-Encoding, 304s included.
  return answer(200, headers, body, { validators, compress: encoded });
}

/** An HTML file stored with nonce placeholders: a weak ETag, and no shared cache may keep it. */
function noncedFile(
  html: Buffer,
  mtime: Date,
  head: FileHead,
  csp: ContentSecurityPolicy,
): StaticFile {
  const nonced = noncedAnswer(html.toString(), csp, head.cacheControl);
  const validators = { etag: nonced.etag!, 'last-modified': mtime.toUTCString() };
  const headers = [
    'Content-Type',
    head.type,
    ...nonced.headers,
    'Last-Modified',
    validators['last-modified'],
    'Accept-Ranges',
    'none',
    ...pageHeaders(head),
  ];
  const file = answer(200, headers, nonced.body, { validators, perResponse: nonced.slots });
  // gzip around its nonces, deflated once here: a response computes a CRC, not a compression.
  return file.compressOnSend === true
    ? withGzipAroundSlots(file, deflatePiecesNow(nonced.slots, 9))
    : file;
}

export function* listFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      yield* listFiles(path);
    } else if (entry.isFile()) {
      yield path;
    }
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The routes the build prerendered, from its `prerendered-routes.json`. */
export function readPrerenderedRoutes(file: string): string[] {
  const { routes } = JSON.parse(readFileSync(file, 'utf8')) as { routes: Record<string, unknown> };
  return Object.keys(routes);
}
