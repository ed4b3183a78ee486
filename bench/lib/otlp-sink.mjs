// Where the traced variants (origin-traced, origin-traced-10) send their spans: an OTLP/HTTP
// endpoint in the bench's own process (on the load generator's CPU, as a collector would be on a
// machine of its own) that takes each export and answers as a collector does. What the origin
// spends making, batching and sending its spans is then the origin's; what a collector spends
// reading them is not.
import { createServer } from 'node:http';

/** Starts the sink on a free loopback port; `received` counts the exports and bytes it was sent. */
export function startOtlpSink() {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports++;
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, {
        'content-type': req.headers['content-type'] ?? 'application/x-protobuf',
      });
      res.end(req.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  // The bench's end is its own: the sink never keeps the process alive.
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        received,
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}
