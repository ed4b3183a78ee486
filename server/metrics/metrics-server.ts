import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { report } from '../errors.ts';

/** Where the exposition text comes from: this process's registry, or the primary's aggregation. */
export interface MetricsSource {
  contentType: string;
  read: () => Promise<string>;
}

export interface MetricsAddress {
  port: number;
  host: string | undefined;
}

/**
 * The Prometheus endpoint: a plain node:http server on its own port (METRICS_PORT), never the
 * public one, so metrics cannot be reached through the CDN or the Ingress. `GET /metrics` (and
 * HEAD) answer the exposition text; other methods on it 405; any other path 404. Calls
 * `listening` once bound, `failed` with a one-line reason when it cannot bind.
 */
export function serveMetrics(
  source: MetricsSource,
  address: MetricsAddress,
  log: Logger,
  failed: (reason: string) => void,
  listening?: () => void,
): Server {
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not Found');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Method Not Allowed');
      return;
    }
    source.read().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: Error) => {
        // A collect() that threw; the next scrape tries again.
        report(log, 'ORIGIN_METRICS_FAILED', { err: error });
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`metrics unavailable: ${error.message}`);
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.on('error', (error: NodeJS.ErrnoException) =>
    failed(error.code === 'EADDRINUSE' ? `METRICS_PORT ${address.port} is in use` : error.message),
  );
  server.listen(address.port, address.host, () => {
    const bound = server.address();
    const port = typeof bound === 'object' && bound ? bound.port : address.port;
    // Not "listening on": tools wait for that phrase to find the public port.
    const url = `http://${address.host ?? 'localhost'}:${port}/metrics`;
    log.info({ url }, `Metrics on ${url}`);
    listening?.();
  });
  return server;
}
