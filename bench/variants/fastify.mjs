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
  indexHtml,
  port,
} from './app-bundle.mjs';

const app = Fastify();
const commonEngine = new CommonEngine({ allowedHosts });

// Default options apart from the cache lifetime Angular's templates use. The default `index`
// serves the prerendered `/` (browser/index.html) from disk; `index: false` would make
// @fastify/send answer `/` with 403 instead of falling through to the not-found handler.
await app.register(fastifyStatic, { root: browserDistFolder, maxAge: '1y' });

app.setNotFoundHandler(async (request, reply) => {
  const responseInit = {};
  const html = await commonEngine.render({
    bootstrap,
    documentFilePath: indexHtml,
    url: `${request.protocol}://${request.host}${request.url}`,
    publicPath: browserDistFolder,
    providers: [{ provide: RESPONSE_INIT, useValue: responseInit }],
  });
  return reply
    .code(responseInit.status ?? 200)
    .type('text/html')
    .send(html);
});

await app.listen({ port, host });
console.log(`fastify listening on http://${host}:${port}`);
