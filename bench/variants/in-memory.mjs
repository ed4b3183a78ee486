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
  if (url.endsWith('/index.html')) files.set(url.slice(0, -'index.html'.length), { body, headers });
  // A localized build's site root is its prefix without the slash too (`/en-US`).
  if (sitePrefix !== '' && url === `${sitePrefix}/index.html`)
    files.set(sitePrefix, { body, headers });
}

const commonEngine = new CommonEngine({ allowedHosts });
const inlineCriticalCss = createCriticalCss(browserDistFolder);

/** Renders a page as the origin does; resolves to its status and HTML. */
export async function renderPage(url) {
  const responseInit = {};
  const html = await commonEngine.render({
    bootstrap,
    documentFilePath: indexHtml,
    url: inSite(url),
    publicPath: browserDistFolder,
    providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    inlineCriticalCss: false,
  });
  return { status: responseInit.status ?? 200, html: inlineCriticalCss(html) };
}
