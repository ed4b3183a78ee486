import type { ServerResponse } from 'node:http';
import type { Http2Stream } from 'node:http2';
import type { Context } from 'koa';

/**
 * Whether an answer can still reach its client: not ended, and its connection (HTTP/1.1) or its
 * stream (HTTP/2) still open. Koa's own test reads the socket, which for a HEAD request over HTTP/2
 * Node reports unwritable at once (the stream will carry no body): Koa then answered nothing and
 * the client waited forever (seen in test/server/compression.test.mjs).
 */
export function canAnswer(res: ServerResponse): boolean {
  if (res.writableEnded) {
    return false;
  }
  const { stream } = res as unknown as { stream?: Http2Stream };
  if (stream !== undefined) {
    return !stream.destroyed && !stream.closed;
  }
  return res.socket === null || res.socket.writable;
}

/**
 * Asks the client to close the connection after this answer (`Connection: close`), over HTTP/1.1.
 * HTTP/2 forbids connection-specific headers (RFC 9113 §8.2.2; Node drops them with a warning): a
 * draining HTTP/2 session gets GOAWAY instead (process/public-server.ts), and a stream answered
 * before its body was read is reset, not the connection it shares.
 */
export function closeAfterAnswer(ctx: Context): void {
  if (ctx.req.httpVersionMajor < 2) {
    ctx.set('Connection', 'close');
  }
}
