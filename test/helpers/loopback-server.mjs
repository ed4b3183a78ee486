// An HTTP server of a test's own on a free loopback port: the APIs renders fetch from.
import { createServer } from 'node:http';

/**
 * Serves `handler` on 127.0.0.1; resolves with its `url` (no trailing slash), the `server` and
 * `close()`.
 * @param {import('node:http').RequestListener} handler
 */
export function serveOnLoopback(handler) {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        server,
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}
