import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Accepts } from 'accepts';
import fresh from 'fresh';
import { sendWithFreshNonce } from '../csp/nonce-template.ts';
import type { StaticFile } from './static-index.ts';

/**
 * The build's .br copy of a file if the client accepts brotli, else its .gz copy if it accepts
 * gzip, else the file itself: the rule koa-send applies to the files served from disk.
 */
export function representation(file: StaticFile, accept: Accepts): StaticFile {
  return (
    file.encoded?.find(({ encoding }) => accept.encodings(encoding, 'identity') === encoding)
      ?.file ?? file
  );
}

/**
 * Answers with a file held in memory: its precomputed headers, and 304 when the client's copy is
 * current (the same `fresh` check koa-conditional-get makes). The fast path and Koa's
 * filesFromMemory both answer through here, so their answers are the same bytes. Returns the status.
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: StaticFile): number {
  // One writeHead with a flat header list: a setHeader per header copies them into an object first.
  if (fresh(req.headers, file.validators)) {
    res.writeHead(304, file.notModifiedHeaders);
    res.end();
    return 304;
  }
  if (file.nonceSlots) {
    // An HTML page under a Content-Security-Policy: a fresh nonce per response, none on a 304.
    sendWithFreshNonce(res, 200, file.headers, file.nonceSlots, req.method === 'HEAD');
    return 200;
  }
  res.writeHead(200, file.headers);
  res.end(req.method === 'HEAD' ? undefined : file.body);
  return 200;
}
