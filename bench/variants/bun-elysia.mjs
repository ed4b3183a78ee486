// The reference article's fastest server, as it wrote it: Bun + Elysia + @elysiajs/static
// (every file registered as a static route at startup) + CommonEngine for everything else, with a
// weak ETag computed by the `etag` package on each rendered page. Run with the Bun runtime
// (node_modules/.bin/bun), not Node.
import { staticPlugin } from '@elysiajs/static';
import etag from 'etag';
import { Elysia } from 'elysia';
import {
  CommonEngine,
  RESPONSE_INIT,
  allowedHosts,
  bootstrap,
  browserDistFolder,
  host,
  inSite,
  indexHtml,
  port,
  sitePrefix,
} from './app-bundle.mjs';

const commonEngine = new CommonEngine({ allowedHosts });

const app = new Elysia()
  .use(
    await staticPlugin({
      alwaysStatic: true,
      indexHTML: false,
      // A localized build's measured locale: its files under its prefix (`/en-US`).
      prefix: sitePrefix || '/',
      assets: browserDistFolder,
    }),
  )
  .get('*', async (ctx) => {
    const responseInit = {};
    const html = await commonEngine.render({
      bootstrap,
      documentFilePath: indexHtml,
      // The URL within the locale's site (the same URL in a plain build): the engine finds the
      // locale's prerendered pages in its own folder by it.
      url: inSite(ctx.request.url),
      publicPath: browserDistFolder,
      providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    });
    ctx.set.status = responseInit.status ?? 200;
    ctx.set.headers['content-type'] = 'text/html; charset=utf-8';
    ctx.set.headers['etag'] = etag(html, { weak: true });
    return html;
  })
  .listen({ port, hostname: host }, () => {
    console.log(`bun-elysia listening on http://${host}:${port}`);
  });

export default app;
