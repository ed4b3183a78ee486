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
} from './app-bundle.mjs';

const server = express();
const commonEngine = new CommonEngine({ allowedHosts });

// Angular 17 routed only '*.*' paths here; `index: false` keeps the same split on Express 5, where
// that pattern no longer exists: files from disk, every page (including the prerendered /) rendered.
server.use(express.static(browserDistFolder, { maxAge: '1y', index: false }));

server.get('/{*splat}', (req, res, next) => {
  const { protocol, originalUrl, headers } = req;
  const responseInit = {};
  commonEngine
    .render({
      bootstrap,
      documentFilePath: indexHtml,
      url: `${protocol}://${headers.host}${originalUrl}`,
      publicPath: browserDistFolder,
      providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    })
    .then((html) => res.status(responseInit.status ?? 200).send(html))
    .catch((err) => next(err));
});

server.listen(port, host, () => {
  console.log(`express-commonengine listening on http://${host}:${port}`);
});
