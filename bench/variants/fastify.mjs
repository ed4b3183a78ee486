// Fastify 5 the way its docs suggest for an SPA/SSR app: @fastify/static for the build's files and
// the not-found handler for everything it does not find, rendered with CommonEngine. Fastify sets
// no ETag on a handler's reply (that needs the separate @fastify/etag plugin); @fastify/static
// does for files.
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
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

const app = Fastify();
const commonEngine = new CommonEngine({ allowedHosts });

/** The app's files from disk, and a render for anything else: the whole server in a plain build. */
async function site(instance) {
  // Default options apart from the cache lifetime Angular's templates use. The default `index`
  // serves the prerendered `/` (browser/index.html) from disk; `index: false` would make
  // @fastify/send answer `/` with 403 instead of falling through to the not-found handler.
  await instance.register(fastifyStatic, { root: browserDistFolder, maxAge: '1y' });
  // Under a prefix, @fastify/static answers the site root only with its slash (`/en-US/`): the
  // root as load-paths.json names it (`/en-US`) gets the same file the same way, as `/` does in a
  // plain build (Fastify registers a plugin's `/` with and without the slash).
  if (sitePrefix !== '') instance.get('/', (request, reply) => reply.sendFile('index.html'));

  instance.setNotFoundHandler(async (request, reply) => {
    const responseInit = {};
    const html = await commonEngine.render({
      bootstrap,
      documentFilePath: indexHtml,
      url: `${request.protocol}://${request.host}${inSite(request.url)}`,
      publicPath: browserDistFolder,
      providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
    });
    return reply
      .code(responseInit.status ?? 200)
      .type('text/html')
      .send(html);
  });
}
// A localized build's measured locale: a plugin under its prefix, as Fastify serves one app of
// several; the engine gets the path within it (inSite), its prerendered pages in its own folder.
await (sitePrefix === '' ? site(app) : app.register(site, { prefix: sitePrefix }));

await app.listen({ port, host });
console.log(`fastify listening on http://${host}:${port}`);
