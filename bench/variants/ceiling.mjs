// The physical limit: node:http with no framework. Every file of the browser build, the
// prerendered page included, is read once into a Buffer with a fixed ETag and answered from
// memory; anything else is rendered by CommonEngine with the same options as the origin, critical
// CSS included: inlined from the stylesheets compiled at startup (the origin's server/critical-css.ts).
// Nothing here is meant to be a server anyone should ship (no host guard, no method checks).
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import {
  CommonEngine,
  RESPONSE_INIT,
  allowedHosts,
  bootstrap,
  browserDistFolder,
  host,
  indexHtml,
  port,
} from './app-bundle.mjs';
import { createCriticalCss } from '../../server/critical-css.ts';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** @type {Map<string, { body: Buffer, headers: Record<string, string | number> }>} */
const files = new Map();
for (const entry of readdirSync(browserDistFolder, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const path = join(entry.parentPath, entry.name);
  const body = readFileSync(path);
  const url = '/' + path.slice(browserDistFolder.length + 1).split('\\').join('/');
  const headers = {
    'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
    'Content-Length': body.length,
    ETag: `W/"${body.length.toString(16)}-${crc32(body).toString(16)}"`,
  };
  files.set(url, { body, headers });
  if (url.endsWith('/index.html')) files.set(url.slice(0, -'index.html'.length), { body, headers });
}

const commonEngine = new CommonEngine({ allowedHosts });
const inlineCriticalCss = createCriticalCss(browserDistFolder);

createServer((req, res) => {
  const file = files.get(req.url);
  if (file) {
    if (req.headers['if-none-match'] === file.headers.ETag) {
      res.writeHead(304, { ETag: file.headers.ETag });
      res.end();
    } else {
      res.writeHead(200, file.headers);
      res.end(file.body);
    }
    return;
  }
  const responseInit = {};
  commonEngine
    .render({
      bootstrap,
      documentFilePath: indexHtml,
      url: `http://${req.headers.host}${req.url}`,
      publicPath: browserDistFolder,
      providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
      inlineCriticalCss: false,
    })
    .then((html) => {
      res.writeHead(responseInit.status ?? 200, { 'Content-Type': TYPES['.html'] });
      res.end(inlineCriticalCss(html));
    })
    .catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
}).listen(port, host, () => {
  console.log(`ceiling listening on http://${host}:${port}`);
});
