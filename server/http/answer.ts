// What the origin sends for a request, as a value, and the one function that writes it. Files,
// prerendered pages, rendered and cached pages and the client-side shell all go out through
// writeAnswer, from the fast path and from Koa's steps alike (as Koa's own respond() is its one
// writer, with `ctx.respond = false` as the way out): one set of rules for 304, HEAD and lengths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import fresh from 'fresh';
import type { Context } from 'koa';
import type { Answer, PerResponseBody } from './answer-value.ts';
import { canAnswer } from './connection.ts';
import { compressible, MIN_COMPRESSED_BYTES } from './content-coding.ts';
import { representationFor } from './encodings.ts';
import { type AnswerMessage, channels, followed } from '../channels.ts';

export type { Answer, Encodings, PerResponseBody } from './answer-value.ts';

/** The Cache-Control of an answer that says nothing else: stored, but revalidated before each use. */
export const REVALIDATE = 'no-cache';

/**
 * What a 304 repeats of its answer's headers (lower case): what RFC 9110 §15.4.5 says a 304 must
 * carry — Content-Location, ETag, Vary, Cache-Control, Expires (Date Node adds) — and Cache-Control's
 * targeted forms (RFC 9213), which a cache refreshes the same way. Nothing else: a 304 updates the
 * stored response's headers (RFC 9111 §4.3.4), and no other metadata serves that. The 330-byte Link
 * of a page was on every 304 before. Age and Cache-Status, which describe this response, are added
 * per response by the writer; Last-Modified only when there is no ETag, as the RFC's example says.
 */
const NOT_MODIFIED_HEADERS: ReadonlySet<string> = new Set([
  'cache-control',
  'cdn-cache-control',
  'surrogate-control',
  'content-location',
  'etag',
  'expires',
  'vary',
]);

/**
 * The answer for a body and its headers (Content-Length left to this), and what its 304 repeats of
 * them. A body worth compressing (`compress`, by default: a compressible Content-Type, at least 1
 * KiB, no Content-Encoding of its own, no `no-transform`) is compressed as it goes out, unless
 * stored codings are attached later (encodings.ts); both vary with Accept-Encoding, 304s included.
 * A streamed body (`stream`) comes as it is made: `body` is then empty, and its `length`, when
 * known, is its Content-Length (else it goes out chunked); it is compressed only when `compress`
 * says so. `length` also says what a HEAD answer declares when it differs from `body` (none).
 */
export function answer(
  status: number,
  headers: readonly string[],
  body: Buffer,
  options: {
    validators?: Answer['validators'];
    perResponse?: PerResponseBody;
    compress?: boolean;
    stream?: Readable;
    pieces?: readonly Buffer[];
    length?: number;
  } = {},
): Answer {
  const { stream, pieces } = options;
  const compress =
    pieces === undefined &&
    (options.compress ?? (stream === undefined && worthCompressing(headers, body)));
  const all = compress ? withVary(headers, 'Accept-Encoding') : [...headers];
  const withoutEtag = !all.some((name, i) => i % 2 === 0 && name.toLowerCase() === 'etag');
  const notModifiedHeaders: string[] = [];
  for (let i = 0; i < all.length; i += 2) {
    const name = all[i].toLowerCase();
    if (NOT_MODIFIED_HEADERS.has(name) || (withoutEtag && name === 'last-modified')) {
      notModifiedHeaders.push(all[i], all[i + 1]);
    }
  }
  const length =
    options.length ??
    (pieces !== undefined
      ? pieces.reduce((sum, piece) => sum + piece.length, 0)
      : stream === undefined
        ? body.length
        : undefined);
  if (length !== undefined) {
    all.push('Content-Length', String(length));
  }
  return {
    status,
    headers: all,
    notModifiedHeaders,
    body,
    stream,
    pieces,
    validators: options.validators,
    perResponse: options.perResponse,
    compressOnSend: compress,
  };
}

/** Whether an answer with these headers is worth compressing (see answer()). */
function worthCompressing(headers: readonly string[], body: Buffer): boolean {
  if (body.length < MIN_COMPRESSED_BYTES) {
    return false;
  }
  let type = '';
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i].toLowerCase();
    if (name === 'content-type') {
      type = headers[i + 1];
    } else if (
      name === 'content-encoding' ||
      (name === 'cache-control' && /\bno-transform\b/i.test(headers[i + 1]))
    ) {
      // Already coded by the app, or declared untouchable (RFC 9111 §5.2.2.6).
      return false;
    }
  }
  return compressible(type);
}

/** `headers` with `name` in their Vary (added to the app's own Vary, or as one of its own). */
export function withVary(headers: readonly string[], name: string): string[] {
  const out = [...headers];
  for (let i = 0; i < out.length; i += 2) {
    if (out[i].toLowerCase() === 'vary') {
      const listed = out[i + 1].split(',').map((item) => item.trim().toLowerCase());
      if (!listed.includes(name.toLowerCase()) && !listed.includes('*')) {
        out[i + 1] = `${out[i + 1]}, ${name}`;
      }
      return out;
    }
  }
  out.push('Vary', name);
  return out;
}

const NO_HEADERS: readonly string[] = [];

/**
 * Writes `stored` in the content coding the request prefers, with `extra` headers of this response
 * (Age, Cache-Status) and the observers' (channels.ts `answer`) on its 200 and its 304 alike: a 304
 * when the request's validators match that representation's (or when the answer is one: Koa's
 * koa-conditional-get decided it), no body for HEAD, the per-response value in every slot, a
 * streamed body as it comes (`failed` hears of a stream that broke on its way). Returns the status
 * sent.
 */
export function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  stored: Answer,
  extra: readonly string[] = NO_HEADERS,
  failed?: (error: Error) => void,
): number {
  if (channels.answer.hasSubscribers && followed(res)) {
    // What the observers add (Server-Timing), as the head goes out.
    const message: AnswerMessage = { req, res, status: stored.status, headers: [] };
    channels.answer.publish(message);
    if (message.headers.length > 0) {
      extra = [...extra, ...message.headers];
    }
  }
  // The representation for this request's Accept-Encoding: its own headers, length and validator.
  const answer = representationFor(stored, req.headers['accept-encoding']);
  if (
    answer.status === 304 ||
    (answer.validators !== undefined && fresh(req.headers, answer.validators))
  ) {
    writeNotModified(res, answer, extra);
    return 304;
  }
  const head = req.method === 'HEAD';
  const { perResponse, stream, pieces } = answer;
  if (stream !== undefined) {
    writeStreamed(res, answer, stream, extra, head, failed);
  } else if (pieces !== undefined) {
    res.writeHead(answer.status, withExtra(answer.headers, extra));
    if (head) {
      res.end();
      return answer.status;
    }
    // One writev of the pieces as they are: a copy into one buffer cost a page's size per response.
    res.cork();
    for (const piece of pieces) {
      res.write(piece);
    }
    res.end();
    res.uncork();
  } else if (perResponse !== undefined) {
    writeWithSlots(res, answer, perResponse, extra, head);
  } else {
    // One writeHead with a flat list: a setHeader per header copies them into an object first.
    res.writeHead(answer.status, withExtra(answer.headers, extra));
    res.end(head ? undefined : answer.body);
  }
  return answer.status;
}

/** A body as it comes: the head at once, each piece as it is made (none for HEAD). */
function writeStreamed(
  res: ServerResponse,
  answer: Answer,
  stream: Readable,
  extra: readonly string[],
  head: boolean,
  failed: ((error: Error) => void) | undefined,
): void {
  res.writeHead(answer.status, withExtra(answer.headers, extra));
  // The head goes now, before the body's first piece is made.
  res.flushHeaders();
  if (head) {
    stream.destroy();
    res.end();
  } else {
    pipeline(stream, res, (error) => error && failed?.(error));
  }
}

/** A body with this response's value in each of its slots (a CSP nonce). */
function writeWithSlots(
  res: ServerResponse,
  answer: Answer,
  perResponse: PerResponseBody,
  extra: readonly string[],
  head: boolean,
): void {
  const { value, headers, trailer } = perResponse.next();
  res.writeHead(answer.status, [...answer.headers, ...extra, ...headers]);
  if (head) {
    res.end();
    return;
  }
  // The stored pieces around the value in one corked write (one writev), never a copy of the
  // body (measured: docs/architecture.md#what-each-optimization-saves).
  const { segments } = perResponse;
  const last = segments.length - 1;
  res.cork();
  for (let i = 0; i < last; i++) {
    res.write(segments[i]);
    res.write(value);
  }
  if (trailer === undefined) {
    res.end(segments[last]);
  } else {
    res.write(segments[last]);
    res.end(trailer);
  }
  res.uncork();
}

/**
 * A 304: only the headers RFC 9110 §15.4.5 lets it repeat (notModifiedHeaders), and this
 * response's own. A header an earlier step set on the response (the hints' Link:
 * writeEarlyHints) is not one a 304 repeats either; a streamed body is not read.
 */
function writeNotModified(res: ServerResponse, answer: Answer, extra: readonly string[]): void {
  for (const name of res.getHeaderNames()) {
    if (!NOT_MODIFIED_HEADERS.has(name)) {
      res.removeHeader(name);
    }
  }
  answer.stream?.destroy();
  res.writeHead(304, withExtra(answer.notModifiedHeaders, extra));
  res.end();
}

/**
 * Hints before the answer: a `103 Early Hints` with `links` (RFC 8297; none when empty) over
 * HTTP/2, and over HTTP/1.1 with `http1` (never to HTTP/1.0, which has no interim responses); and
 * `header` as the `Link` of the final answer, written by writeAnswer or Koa, so that a CDN that
 * learns hints from answers can replay them.
 */
export function writeEarlyHints(
  req: IncomingMessage,
  res: ServerResponse,
  { links, header, http1 }: { links: readonly string[]; header: string; http1: boolean },
): void {
  if (links.length > 0 && (req.httpVersionMajor >= 2 || (http1 && req.httpVersionMinor >= 1))) {
    res.writeEarlyHints({ link: links as string[] });
  }
  res.setHeader('Link', header);
}

/**
 * A Koa step answers through writeAnswer too: Koa then writes nothing of its own. Nothing goes to
 * a client that has left, as with Koa's own respond(); a streamed body that breaks on its way is
 * Koa's error event, as one Koa streams is.
 */
export function respond(ctx: Context, answer: Answer, extra?: readonly string[]): void {
  ctx.respond = false;
  if (canAnswer(ctx.res)) {
    writeAnswer(ctx.req, ctx.res, answer, extra, (error) => ctx.app.emit('error', error, ctx));
  } else {
    answer.stream?.destroy();
  }
}

function withExtra(headers: readonly string[], extra: readonly string[]): string[] {
  // writeHead takes the list as is when nothing is added: no copy per response.
  return (extra.length === 0 ? headers : [...headers, ...extra]) as string[];
}
