// What a page's browser will fetch first, read once at startup from the build's own manifests: the
// stylesheet and entry scripts of the client shell (browser/index.csr.html: the same for every page)
// and each route's lazy chunks (server/angular-app-manifest.mjs: what AngularNodeAppEngine preloads).
// The origin sends them as `Link` (preload, modulepreload) in a 103 Early Hints before a page is
// looked up or rendered and on the page itself, and adds the route's `modulepreload` tags to the
// pages CommonEngine renders. Nothing here names the demo's files: any app's build works, and a
// build without these manifests gets no hints.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PageHints {
  /** `Link` values for a page path: stylesheet, entry scripts, then the route's lazy chunks. */
  links(path: string): readonly string[];
  /** The same, as one header value; undefined when there is nothing to hint. */
  header(path: string): string | undefined;
  /** The route's lazy chunks, as the page's HTML names them (relative to its base href). */
  routeChunks(path: string): readonly string[];
}

/** A route of the app manifest, as far as hints need it. */
export interface ManifestRoute {
  route: string;
  preload?: readonly string[];
}

/** What one route's pages are hinted with, made once. */
interface RouteHints {
  links: readonly string[];
  header: string | undefined;
  chunks: readonly string[];
}

interface TreeNode {
  children: Map<string, TreeNode>;
  hints?: RouteHints;
}

export const NO_HINTS: PageHints = {
  links: () => [],
  header: () => undefined,
  routeChunks: () => [],
};

/**
 * Reads the build's manifests (dist/browser/index.csr.html, dist/server/angular-app-manifest.mjs).
 * Either may be missing (an i18n build has one per locale): hints are then what the other gives.
 */
export async function readPageHints(browserDir: string, serverDir: string): Promise<PageHints> {
  const shellFile = join(browserDir, 'index.csr.html');
  const manifestFile = join(serverDir, 'angular-app-manifest.mjs');
  const shell = existsSync(shellFile) ? readFileSync(shellFile, 'utf8') : '';
  let routes: readonly ManifestRoute[] = [];
  if (existsSync(manifestFile)) {
    const manifest = (await import(
      // A file of the build, found at run time: nothing for Vite (ng serve) to analyze or warn about.
      /* @vite-ignore */ pathToFileURL(manifestFile).href
    )) as {
      default?: { routes?: unknown };
    };
    routes = manifestRoutes(manifest.default?.routes);
  }
  return pageHints(shell, routes);
}

/** The routes of a manifest, if its `routes` has the shape hints read; else none. */
function manifestRoutes(value: unknown): ManifestRoute[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.filter(
    (route: Partial<ManifestRoute> | null): route is ManifestRoute =>
      typeof route?.route === 'string' &&
      (route.preload === undefined ||
        (Array.isArray(route.preload) && route.preload.every((file) => typeof file === 'string'))),
  );
}

/** Hints from the client shell's HTML and the manifest's routes. */
export function pageHints(shellHtml: string, routes: readonly ManifestRoute[]): PageHints {
  const base = baseHref(shellHtml);
  const entry = entryLinks(shellHtml, base);
  const make = (chunks: readonly string[]): RouteHints => {
    const own = chunks.filter(isRelativeFile);
    const links = [
      ...entry,
      ...own
        .map((file) => `<${base}${file}>; rel=modulepreload`)
        .filter((link) => !entry.includes(link)),
    ];
    return { links, header: links.length === 0 ? undefined : links.join(', '), chunks: own };
  };
  const root: TreeNode = { children: new Map() };
  for (const { route, preload } of routes) {
    insert(root, segmentsOf(route), make(preload ?? []));
  }
  const fallback = make([]);
  const find = (path: string): RouteHints => match(root, segmentsOf(path), 0) ?? fallback;
  return {
    links: (path) => find(path).links,
    header: (path) => find(path).header,
    routeChunks: (path) => find(path).chunks,
  };
}

/** The page's `<base href>`, which its relative URLs resolve against ('/' without one). */
function baseHref(html: string): string {
  const href = /<base\s[^>]*href="([^"]*)"/i.exec(html)?.[1] ?? '/';
  return href.endsWith('/') ? href : `${href}/`;
}

/** The shell's stylesheets, module entry scripts and their modulepreloads, in document order. */
function entryLinks(html: string, base: string): string[] {
  const links: string[] = [];
  const add = (link: string) => {
    if (!links.includes(link)) {
      links.push(link);
    }
  };
  for (const [tag] of html.matchAll(/<(?:link|script)\b[^>]*>/gi)) {
    const href = /\s(?:href|src)="([^"]+)"/i.exec(tag)?.[1];
    if (href === undefined || !isRelativeFile(href)) {
      continue;
    }
    if (/^<link\b/i.test(tag) && /\srel="stylesheet"/i.test(tag)) {
      add(`<${base}${href}>; rel=preload; as=style`);
    } else if (/^<link\b/i.test(tag) && /\srel="modulepreload"/i.test(tag)) {
      add(`<${base}${href}>; rel=modulepreload`);
    } else if (/^<script\b/i.test(tag) && /\stype="module"/i.test(tag)) {
      add(`<${base}${href}>; rel=modulepreload`);
    }
  }
  return links;
}

/** A file of the build named relative to the base href: no scheme, host or leading slash, nothing to escape. */
function isRelativeFile(href: string): boolean {
  return /^[\w.-]+(?:\/[\w.-]+)*$/.test(href) && !href.startsWith('.');
}

/** A route's segments as Angular's route tree keys them (`:id` as `*`). */
function segmentsOf(path: string): string[] {
  return path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? '*' : segment));
}

function insert(root: TreeNode, segments: readonly string[], hints: RouteHints): void {
  let node = root;
  for (const segment of segments) {
    let child = node.children.get(segment);
    if (child === undefined) {
      child = { children: new Map() };
      node.children.set(segment, child);
    }
    node = child;
  }
  node.hints ??= hints;
}

/** Angular's own order (RouteTree#traverseBySegments): an exact segment, then `*`, then `**`. */
function match(node: TreeNode, segments: readonly string[], at: number): RouteHints | undefined {
  if (at >= segments.length) {
    return node.hints ?? node.children.get('**')?.hints;
  }
  for (const key of [segments[at], '*']) {
    const child = node.children.get(key);
    const found = child && match(child, segments, at + 1);
    if (found !== undefined) {
      return found;
    }
  }
  return node.children.get('**')?.hints;
}
