import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { contentType } from 'mime-types';
import { noncedAnswer } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { answer, type Answer, REVALIDATE } from '../http/answer.ts';
import { strongEtag } from '../http/entity-tag.ts';

/**
 * A file answered from memory: its bytes and every header, computed once at startup. An HTML page
 * under a Content-Security-Policy holds nonce placeholders, filled per response.
 */
export interface StaticFile extends Answer {
  /** Precompressed copies the build holds next to the file (`name.br`, `name.gz`), best first. */
  encoded?: { encoding: Encoding; file: StaticFile }[];
}

/** A file over the memory limits, served from disk by koa-static. */
export interface DiskFile {
  /** The build holds `.br` or `.gz` copies of it: answers vary with Accept-Encoding. */
  encoded: boolean;
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
  /** Whether the build holds any `.br`/`.gz` copies (only then may koa-static look for them). */
  precompressed: boolean;
}

type Encoding = 'br' | 'gzip';
/** Precompressed copies a build step may write next to a file, in order of preference. */
const ENCODINGS: { encoding: Encoding; extension: string }[] = [
  { encoding: 'br', extension: '.br' },
  { encoding: 'gzip', extension: '.gz' },
];

export interface StaticIndexOptions {
  /** Files up to this size are held in memory (default 1 MiB). */
  maxFileBytes?: number;
  /** Bytes held in memory in all; files past it are served from disk (default 64 MiB, 0 for none). */
  maxTotalBytes?: number;
  /** HTML files get a fresh nonce per response under this policy (csp/). */
  csp?: ContentSecurityPolicy;
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
const HASHED_NAME = /-[A-Za-z0-9_-]{8}\.(?:js|mjs|css)$|^\/media\/[^/]+-[A-Za-z0-9_-]{8}\.\w+$/;

/** A path of only unreserved characters and sub-delims: the same string before and after decoding. */
const PLAIN_PATH = /^\/[\w\-.~!$&'()*+,;=:@/]*$/;

/** Cache-Control for a file of the build, by its URL path. */
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
  { maxFileBytes = 1024 * 1024, maxTotalBytes = 64 * 1024 * 1024, csp }: StaticIndexOptions = {},
): StaticIndex {
  const files = new Map<string, StaticFile>();
  const largeFiles = new Map<string, DiskFile>();
  const listed = listBuild(browserDir);
  let precompressed = false;
  const { read, bodies, held } = bodyReader(listed);

  for (const [urlPath, { size, mtime }] of listed) {
    const siblings = ENCODINGS.filter(({ extension }) => listed.has(urlPath + extension));
    precompressed ||= siblings.length > 0;
    // A file and its compressed copies are held together or not at all.
    const groupPaths = [urlPath, ...siblings.map(({ extension }) => urlPath + extension)];
    const unreadBytes = groupPaths.reduce(
      (sum, path) => sum + (bodies.has(path) ? 0 : listed.get(path)!.size),
      0,
    );
    const type =
      contentType(urlPath.slice(urlPath.lastIndexOf('/') + 1)) || 'application/octet-stream';
    const cacheControl = cacheControlFor(urlPath);
    if (csp && type.startsWith('text/html')) {
      // Under a policy, HTML is always held (koa-static could not give it a nonce), and sent as it
      // is: a compressed copy cannot take one either.
      files.set(urlPath, noncedFile(read(urlPath), mtime, type, cacheControl, csp));
      continue;
    }
    if (size > maxFileBytes || held() + unreadBytes > maxTotalBytes) {
      largeFiles.set(urlPath, { encoded: siblings.length > 0 });
      continue;
    }
    const vary = siblings.length > 0;
    const file = staticFile(read(urlPath), mtime, type, cacheControl, undefined, vary);
    if (vary) {
      file.encoded = siblings.map(({ encoding, extension }) => ({
        encoding,
        file: staticFile(
          read(urlPath + extension),
          listed.get(urlPath + extension)!.mtime,
          type,
          cacheControl,
          encoding,
          vary,
        ),
      }));
    }
    files.set(urlPath, file);
  }

  addPrerenderedRoutes(prerenderedRoutes, files, largeFiles);
  const verbatim = new Map([...files].filter(([path]) => PLAIN_PATH.test(path)));
  return {
    get: (path) => files.get(path.includes('%') ? safeDecode(path) : path),
    verbatim: (target) => verbatim.get(target),
    onDisk: (path) => largeFiles.get(path.includes('%') ? safeDecode(path) : path),
    precompressed,
  };
}

/** Every file of the build by its URL path, with where it is, its size and its time. */
function listBuild(browserDir: string): Map<string, { path: string; size: number; mtime: Date }> {
  const listed = new Map<string, { path: string; size: number; mtime: Date }>();
  for (const path of listFiles(browserDir)) {
    const { size, mtime } = statSync(path);
    listed.set('/' + relative(browserDir, path).split(sep).join('/'), { path, size, mtime });
  }
  return listed;
}

/**
 * Reads a file of the build once and counts its bytes once, also when a `.br` copy is both a file
 * of its own and the compressed form of another.
 */
function bodyReader(listed: Map<string, { path: string }>) {
  const bodies = new Map<string, Buffer>();
  let heldBytes = 0;
  const read = (urlPath: string): Buffer => {
    let body = bodies.get(urlPath);
    if (body === undefined) {
      body = readFileSync(listed.get(urlPath)!.path);
      bodies.set(urlPath, body);
      heldBytes += body.length;
    }
    return body;
  };
  return { read, bodies: bodies as ReadonlyMap<string, Buffer>, held: () => heldBytes };
}

/** A prerendered route answers with its page: `/` is index.html, `/about` is about/index.html. */
function addPrerenderedRoutes(
  routes: readonly string[],
  files: Map<string, StaticFile>,
  largeFiles: Map<string, DiskFile>,
): void {
  for (const route of routes) {
    const pagePath = route === '/' ? '/index.html' : `${route}/index.html`;
    const page = files.get(pagePath);
    if (page) {
      files.set(route, page);
    } else if (largeFiles.has(pagePath)) {
      largeFiles.set(route, largeFiles.get(pagePath)!);
    }
  }
}

/** One representation of a file, with every header it is answered with. */
function staticFile(
  body: Buffer,
  mtime: Date,
  type: string,
  cacheControl: string,
  encoding: Encoding | undefined,
  vary: boolean,
): StaticFile {
  const validators = { etag: strongEtag(body), 'last-modified': mtime.toUTCString() };
  const headers = [
    'Content-Type',
    type,
    ...(encoding ? ['Content-Encoding', encoding] : []),
    'Cache-Control',
    cacheControl,
    'ETag',
    validators.etag,
    'Last-Modified',
    validators['last-modified'],
    // Caches must key a file that has compressed copies by Accept-Encoding, 304s included.
    ...(vary ? ['Vary', 'Accept-Encoding'] : []),
    // Whole files only: nothing in a browser build needs byte ranges (docs/architecture.md, HTTP behaviour).
    'Accept-Ranges',
    'none',
  ];
  return answer(200, headers, body, { validators });
}

/** An HTML file stored with nonce placeholders: a weak ETag, and no shared cache may keep it. */
function noncedFile(
  html: Buffer,
  mtime: Date,
  type: string,
  cacheControl: string,
  csp: ContentSecurityPolicy,
): StaticFile {
  const nonced = noncedAnswer(html.toString(), csp, cacheControl);
  const validators = { etag: nonced.etag!, 'last-modified': mtime.toUTCString() };
  const headers = [
    'Content-Type',
    type,
    ...nonced.headers,
    'Last-Modified',
    validators['last-modified'],
    'Accept-Ranges',
    'none',
  ];
  return answer(200, headers, nonced.body, { validators, perResponse: nonced.slots });
}

function* listFiles(dir: string): Generator<string> {
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
