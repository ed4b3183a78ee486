// The framework-free parts of the reference servers (ceiling, koa-floor): every file of the build
// in memory with a fixed ETag, and rendering with the origin's options (compiled critical CSS). In
// a localized build, the measured locale's files under its prefix and its pages rendered by its app.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { createCriticalCss } from '../../server/pages/critical-css.ts';
import { strongEtag } from '../../server/http/entity-tag.ts';
import {
  CommonEngine,
  RESPONSE_INIT,
  allowedHosts,
  bootstrap,
  browserDistFolder,
  inSite,
  indexHtml,
  serverRoutes,
  sitePrefix,
} from './app-bundle.mjs';

export const HTML = 'text/html; charset=utf-8';
const TYPES = {
  '.html': HTML,
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** @type {Map<string, { body: Buffer, headers: Record<string, string | number> }>} */
export const files = new Map();
for (const entry of readdirSync(browserDistFolder, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const path = join(entry.parentPath, entry.name);
  const body = readFileSync(path);
  const url =
    `${sitePrefix}/` +
    path
      .slice(browserDistFolder.length + 1)
      .split('\\')
      .join('/');
  const headers = {
    'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
    'Content-Length': body.length,
    ETag: strongEtag(body),
  };
  files.set(url, { body, headers });
  if (url.endsWith('/index.html')) {
    // A prerendered page at its route's path, as Angular's server and the origin answer it:
    // `/about` and `/about/` (and `/` for the root's).
    files.set(url.slice(0, -'index.html'.length), { body, headers });
    const route = url.slice(0, -'/index.html'.length);
    if (route !== '' && route !== sitePrefix) files.set(route, { body, headers });
  }
  // A localized build's site root is its prefix without the slash too (`/en-US`).
  if (sitePrefix !== '' && url === `${sitePrefix}/index.html`)
    files.set(sitePrefix, { body, headers });
}

const commonEngine = new CommonEngine({ allowedHosts });
const inlineCriticalCss = createCriticalCss(browserDistFolder);

/**
 * The status the app's server routes declare for a path (`{ path: '**', status: 404 }`), matched as
 * Angular and the origin match them (server/pages/route-matcher.ts): segment by segment, `:name` and
 * `*` one segment, `**` the rest, the first match wins. The origin starts every render's
 * RESPONSE_INIT with it, so the ceiling does too: the same answer for the same render.
 */
const routes = serverRoutes.map((route) => ({
  segments: route.path.split('/').filter(Boolean),
  status: route.status,
}));
function declaredStatus(pathname) {
  const segments = pathname.split('/').filter(Boolean);
  const matches = (pattern) => {
    for (let i = 0; i < pattern.length; i++) {
      if (pattern[i] === '**') return true;
      if (i >= segments.length) return false;
      if (pattern[i] !== '*' && !pattern[i].startsWith(':') && pattern[i] !== segments[i])
        return false;
    }
    return pattern.length === segments.length;
  };
  return routes.find((route) => matches(route.segments))?.status;
}

/** Renders a page as the origin does; resolves to its status and HTML. */
export async function renderPage(url) {
  const inSiteUrl = inSite(url);
  const status = declaredStatus(new URL(inSiteUrl, 'http://localhost').pathname);
  const responseInit = status === undefined ? {} : { status };
  const html = await commonEngine.render({
    bootstrap,
    documentFilePath: indexHtml,
    url: inSiteUrl,
    publicPath: browserDistFolder,
    providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    inlineCriticalCss: false,
  });
  return { status: responseInit.status ?? 200, html: inlineCriticalCss(html) };
}
