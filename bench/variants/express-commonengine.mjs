// The reference article's starting point: the server.ts that Angular 17's `ng new --ssr` generated
// (Express + express.static + CommonEngine + res.send), on Express 5. Express computes its default
// weak ETag (SHA-1 of the body) on every res.send and answers 304 itself.
import express from 'express';
import {
  CommonEngine,
  RESPONSE_INIT,
  allowedHosts,
  bootstrap,
  browserDistFolder,
  host,
  indexHtml,
  port,
  sitePrefix,
} from './app-bundle.mjs';

const server = express();
const commonEngine = new CommonEngine({ allowedHosts });
// A localized build's measured locale is a sub-app under its prefix, as Express serves one app of
// several: it sees its own paths (req.url), its files and prerendered pages in its own folder.
const site = sitePrefix === '' ? server : express.Router();

// Angular 17 routed only '*.*' paths here; `index: false` keeps the same split on Express 5, where
// that pattern no longer exists: files from disk, every page (including the prerendered /) rendered.
// Under a prefix, `redirect` (on by default) would send the site root without its slash (`/en-US`)
// to `/en-US/`, where a plain build's `/` goes to the engine: off there, so it goes to the engine too.
site.use(
  express.static(browserDistFolder, { maxAge: '1y', index: false, redirect: site === server }),
);

site.get('/{*splat}', (req, res, next) => {
  const { protocol, url, headers } = req;
  const responseInit = {};
  commonEngine
    .render({
      bootstrap,
      documentFilePath: indexHtml,
      url: `${protocol}://${headers.host}${url}`,
      publicPath: browserDistFolder,
      providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    })
    .then((html) => res.status(responseInit.status ?? 200).send(html))
    .catch((err) => next(err));
});
if (site !== server) server.use(sitePrefix, site);

server.listen(port, host, () => {
  console.log(`express-commonengine listening on http://${host}:${port}`);
});
