// Koa's own floor: the ceiling's work (files from memory, the same renders) inside one Koa
// middleware and nothing else — no guard, no validators, no router. The distance from here to the
// ceiling is what Koa itself costs per request; the distance from the origin to here is what the
// origin's own steps cost.
import Koa from 'koa';
import { host, port } from './app-bundle.mjs';
import { HTML, files, renderPage } from './in-memory.mjs';

const app = new Koa();
app.use(async (ctx) => {
  const file = files.get(ctx.url);
  if (file) {
    ctx.set('ETag', file.headers.ETag);
    if (ctx.get('If-None-Match') === file.headers.ETag) {
      ctx.status = 304;
      return;
    }
    ctx.set('Content-Type', file.headers['Content-Type']);
    ctx.body = file.body;
    return;
  }
  const { status, html } = await renderPage(`http://${ctx.host}${ctx.url}`);
  ctx.status = status;
  ctx.set('Content-Type', HTML);
  ctx.body = html;
});
app.listen(port, host, () => {
  console.log(`koa-floor listening on http://${host}:${port}`);
});
