import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { crc32 } from 'node:zlib';
import { contentType } from 'mime-types';

/** A file answered from memory: its bytes and every header, computed once at startup. */
export interface StaticFile {
  body: Buffer;
  headers: [name: string, value: string][];
  /** What a 304 must repeat (RFC 9110 15.4.5): nothing that describes a body it does not carry. */
  notModifiedHeaders: [name: string, value: string][];
  /** The validators, in the shape `fresh` compares a request against. */
  validators: { etag: string; 'last-modified': string };
}

export interface StaticIndex {
  /** The file for a URL path (prerendered routes included), if held in memory. */
  get(path: string): StaticFile | undefined;
  /** Whether a URL path names a file or prerendered page not held in memory (koa-static serves it). */
  isOnDisk(path: string): boolean;
}

export interface StaticIndexOptions {
  /** Files up to this size are held in memory (default 1 MiB). */
  maxFileBytes?: number;
  /** Bytes held in memory in all; files past it are served from disk (default 64 MiB, 0 for none). */
  maxTotalBytes?: number;
}

/** Immutable for a year: the file name changes whenever the content does. */
export const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** Everything else may be stored, but is revalidated with its ETag before each use. */
export const REVALIDATE = 'no-cache';
/**
 * Bundles the application builder names `name-HASH.js|css` (outputHashing "all"), and the files it
 * copies to media/ with hashed names. Files from public/ keep their names and are revalidated.
 */
const HASHED_NAME = /-[A-Za-z0-9_-]{8}\.(?:js|mjs|css)$|^\/media\/[^/]+-[A-Za-z0-9_-]{8}\.\w+$/;

/** Cache-Control for a file of the build, by its URL path. */
export function cacheControlFor(urlPath: string): string {
  return HASHED_NAME.test(urlPath) ? HASHED_ASSET_CACHE : REVALIDATE;
}

/** A weak validator from the content: 32-bit CRC (zlib's, built into Node) plus the length. */
export function contentEtag(body: Buffer): string {
  return `W/"${body.length.toString(16)}-${crc32(body).toString(16)}"`;
}

/**
 * Indexes the browser build once at startup. Requests for files and prerendered pages then cost a
 * Map lookup: no fs call, no hashing, no MIME lookup, no regex. The build never changes under a
 * running server, so nothing here is ever invalidated.
 */
export function buildStaticIndex(
  browserDir: string,
  prerenderedRoutes: readonly string[],
  { maxFileBytes = 1024 * 1024, maxTotalBytes = 64 * 1024 * 1024 }: StaticIndexOptions = {},
): StaticIndex {
  const files = new Map<string, StaticFile>();
  const largeFiles = new Set<string>();
  let heldBytes = 0;

  for (const file of listFiles(browserDir)) {
    const urlPath = '/' + relative(browserDir, file).split(sep).join('/');
    const { size, mtime } = statSync(file);
    if (size > maxFileBytes || heldBytes + size > maxTotalBytes) {
      largeFiles.add(urlPath);
      continue;
    }
    const body = readFileSync(file);
    heldBytes += size;
    const validators = { etag: contentEtag(body), 'last-modified': mtime.toUTCString() };
    const notModifiedHeaders: [string, string][] = [
      ['Cache-Control', cacheControlFor(urlPath)],
      ['ETag', validators.etag],
      ['Last-Modified', validators['last-modified']],
    ];
    files.set(urlPath, {
      body,
      validators,
      notModifiedHeaders,
      headers: [
        ['Content-Type', contentType(urlPath.slice(urlPath.lastIndexOf('/') + 1)) || 'application/octet-stream'],
        ...notModifiedHeaders,
        // Whole files only: nothing in a browser build needs byte ranges (see README).
        ['Accept-Ranges', 'none'],
      ],
    });
  }

  // A prerendered route answers with its page: `/` is index.html, `/about` is about/index.html.
  for (const route of prerenderedRoutes) {
    const pagePath = route === '/' ? '/index.html' : `${route}/index.html`;
    const page = files.get(pagePath);
    if (page) {
      files.set(route, page);
    } else if (largeFiles.has(pagePath)) {
      largeFiles.add(route);
    }
  }

  return {
    get: (path) => files.get(path.includes('%') ? safeDecode(path) : path),
    isOnDisk: (path) => largeFiles.has(path.includes('%') ? safeDecode(path) : path),
  };
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
