// The public port's server: plain HTTP/1.1, or with TLS_CERT and TLS_KEY, HTTPS with HTTP/2 and
// HTTP/1.1 for the clients that ask for it (ALPN). Both hand Koa (and the fast path) the same
// request and response API; this is where they differ: how each drains on SIGTERM.
import { createServer, type RequestListener, type Server } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import { Server as NetServer } from 'node:net';

/** PEM bytes of the certificate chain and its private key (TLS_CERT, TLS_KEY). */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/** A server of the public port, and how it stops. */
export interface PublicServer {
  readonly server: Server | Http2SecureServer;
  readonly scheme: 'http' | 'https';
  /**
   * Stops accepting connections; `done` once the last one closed. In-flight requests finish: an
   * HTTP/2 session gets GOAWAY and closes after its streams, an HTTP/1.1 connection when idle.
   */
  drain(done: () => void): void;
  /**
   * As `drain`, but an idle HTTP/1.1 connection is left open: its client's next request on it is
   * answered (with `Connection: close`, lifecycle.ts), or Node closes it at its keep-alive timeout
   * as on any day. Closing it now would race that request: the client would see the connection
   * close under it.
   */
  retire(done: () => void): void;
  /** Closes the HTTP/1.1 connections that are idle now (a keep-alive connection after an answer). */
  closeIdle(): void;
  /** Closes every connection now (the grace period is over). */
  closeAll(): void;
}

/** Slow or stalled clients must not hold connections open forever. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** An HTTP/2 session with nothing to do for this long is closed (nginx's default is 3 minutes). */
const SESSION_IDLE_MS = 120_000;

export function createPublicServer(
  listener: RequestListener,
  tls: TlsFiles | undefined,
): PublicServer {
  return tls === undefined ? http1Server(listener) : http2Server(listener, tls);
}

function http1Server(listener: RequestListener): PublicServer {
  const server = createServer(listener);
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // `Expect: 100-continue`: no route reads a request body, so the final answer (405 for a POST)
  // goes out instead of Node's automatic 100 Continue, which invited the client to upload it.
  server.on('checkContinue', listener);
  return {
    server,
    scheme: 'http',
    drain: (done) => {
      server.close(() => done());
      server.closeIdleConnections();
    },
    retire: (done) => stopListening(server, done),
    closeIdle: () => server.closeIdleConnections(),
    closeAll: () => server.closeAllConnections(),
  };
}

/**
 * Stops accepting connections, `done` once the last one closed: net.Server's own close, without
 * what Node's HTTP servers add to it (closing idle keep-alive connections, and every HTTP/2 session).
 */
function stopListening(server: Server | Http2SecureServer, done: () => void): void {
  NetServer.prototype.close.call(server, () => done());
}

/** Node's HTTP/1.1 connections on an HTTP/2 server (allowHTTP1) are closed as on an HTTP/1.1 one. */
interface Http1Connections {
  closeIdleConnections?(): void;
  closeAllConnections?(): void;
}

function http2Server(listener: RequestListener, { cert, key }: TlsFiles): PublicServer {
  // Http2ServerRequest and Http2ServerResponse are Node's compatibility API: the same members
  // Koa, the fast path and the answer writer use on IncomingMessage and ServerResponse.
  const handle = listener as unknown as Parameters<typeof createSecureServer>[1];
  const server = createSecureServer({ allowHTTP1: true, cert, key }, handle);
  const http1 = server as Http2SecureServer & Http1Connections;
  // The same bounds for the HTTP/1.1 connections it serves.
  Object.assign(server, { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS });
  server.setTimeout(SESSION_IDLE_MS);
  server.on('checkContinue', handle!);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  // A handshake that fails (a scanner, a client refusing the certificate) concerns that client only.
  server.on('tlsClientError', () => undefined);
  return {
    server,
    scheme: 'https',
    drain: (done) => {
      server.close(() => done());
      for (const session of sessions) {
        // GOAWAY: the client opens no new stream here; the session ends after its open streams.
        session.close();
      }
      http1.closeIdleConnections?.();
    },
    retire: (done) => {
      stopListening(server, done);
      for (const session of sessions) {
        session.close();
      }
    },
    closeIdle: () => http1.closeIdleConnections?.(),
    closeAll: () => {
      for (const session of sessions) {
        session.destroy();
      }
      http1.closeAllConnections?.();
    },
  };
}
