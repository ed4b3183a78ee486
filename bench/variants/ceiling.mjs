// The physical limit: node:http with no framework. Every file of the browser build, the
// prerendered page included, is answered from memory with a fixed ETag; anything else is rendered
// by CommonEngine with the same options as the origin, critical CSS included (in-memory.mjs).
// Nothing here is meant to be a server anyone should ship (no host guard, no method checks).
import { createServer } from 'node:http';
import { host, port } from './app-bundle.mjs';
import { HTML, files, renderPage } from './in-memory.mjs';

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
  renderPage(`http://${req.headers.host}${req.url}`).then(
    ({ status, html }) => {
      res.writeHead(status, { 'Content-Type': HTML });
      res.end(html);
    },
    (error) => {
      res.writeHead(500);
      res.end(String(error));
    },
  );
}).listen(port, host, () => {
  console.log(`ceiling listening on http://${host}:${port}`);
});
