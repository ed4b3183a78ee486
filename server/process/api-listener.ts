// The private listener renders reach the app's own API on (app-api/api-route.ts): plain HTTP/1.1 on
// 127.0.0.1, a port of this process's own, serving the same request listener as the public port, so
// the API's requests are answered, observed and traced as any other (a SERVER span under the
// render's fetch). Only the renders of this process are sent here; anything else that finds the port
// gets what the public port would answer it. It stays open while the public port drains, since
// renders still in flight fetch through it, and closes once the public port has drained.
import { createServer, type RequestListener } from 'node:http';
import type { PublicServer } from './public-server.ts';

/** The private listener: where it is, and how it stops. */
export interface ApiListener {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops accepting and closes its connections now: nothing waits on them once the public port is done. */
  close(): void;
}

/**
 * Listens on a free loopback port. `exclusive`: a cluster worker binds it itself. Without it the
 * primary would hold one socket for every worker (a worker's render could be answered by another)
 * and would count the worker as listening, hence ready to replace the one it recycles, before its
 * public port is.
 */
export function openApiListener(listener: RequestListener): Promise<ApiListener> {
  const server = createServer(listener);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      server.off('error', reject);
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.close();
          server.closeAllConnections();
        },
      });
    });
  });
}

/**
 * `server`, whose drain, retire and closeAll close the private listener (if any) once they are done:
 * nothing of it holds the process's exit.
 */
export function withApiListener(server: PublicServer, api: ApiListener | undefined): PublicServer {
  if (api === undefined) {
    return server;
  }
  const thenClose = (done: () => void) => () => {
    api.close();
    done();
  };
  return {
    server: server.server,
    scheme: server.scheme,
    drain: (done) => server.drain(thenClose(done)),
    retire: (done) => server.retire(thenClose(done)),
    closeIdle: () => server.closeIdle(),
    closeAll: () => {
      server.closeAll();
      api.close();
    },
  };
}
