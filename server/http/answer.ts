// What the origin sends for a request, as a value, and the one function that writes it. Files,
// prerendered pages, rendered and cached pages and the client-side shell all go out through
// writeAnswer, from the fast path and from Koa's steps alike (as Koa's own respond() is its one
// writer, with `ctx.respond = false` as the way out): one set of rules for 304, HEAD and lengths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';
import type { Context } from 'koa';
import type { Answer, PerResponseBody } from './answer-value.ts';
import { canAnswer } from './connection.ts';
import { compressible, MIN_COMPRESSED_BYTES } from './content-coding.ts';
import { representationFor } from './encodings.ts';
import { type AnswerMessage, channels } from '../channels.ts';

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
 */
export function answer(
  status: number,
  headers: readonly string[],
  body: Buffer,
  options: {
    validators?: Answer['validators'];
    perResponse?: PerResponseBody;
    compress?: boolean;
  } = {},
): Answer {
  const compress = options.compress ?? worthCompressing(headers, body);
  const all = compress ? withVary(headers, 'Accept-Encoding') : [...headers];
  const withoutEtag = !all.some((name, i) => i % 2 === 0 && name.toLowerCase() === 'etag');
  const notModifiedHeaders: string[] = [];
  for (let i = 0; i < all.length; i += 2) {
    const name = all[i].toLowerCase();
    if (NOT_MODIFIED_HEADERS.has(name) || (withoutEtag && name === 'last-modified')) {
      notModifiedHeaders.push(all[i], all[i + 1]);
    }
  }
  all.push('Content-Length', String(body.length));
  return {
    status,
    headers: all,
    notModifiedHeaders,
    body,
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
 * (Age, Cache-Status) on its 200 and its 304 alike: a 304 when the request's validators match that
 * representation's, no body for HEAD, the per-response value in every slot. Returns the status sent.
 */
export function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  stored: Answer,
  extra: readonly string[] = NO_HEADERS,
): number {
  if (channels.answer.hasSubscribers) {
    // What the observers add (Server-Timing), as the head goes out.
    const message: AnswerMessage = { req, res, status: stored.status, headers: [] };
    channels.answer.publish(message);
    if (message.headers.length > 0) {
      extra = [...extra, ...message.headers];
    }
  }
  // The representation for this request's Accept-Encoding: its own headers, length and validator.
  const answer = representationFor(stored, req.headers['accept-encoding']);
  if (answer.validators !== undefined && fresh(req.headers, answer.validators)) {
    // A header an earlier step set on the response (the hints' Link: writeEarlyHints) is not one a
    // 304 repeats either.
    for (const name of res.getHeaderNames()) {
      if (!NOT_MODIFIED_HEADERS.has(name)) {
        res.removeHeader(name);
      }
    }
    res.writeHead(304, withExtra(answer.notModifiedHeaders, extra));
    res.end();
    return 304;
  }
  const head = req.method === 'HEAD';
  const { perResponse } = answer;
  if (perResponse === undefined) {
    // One writeHead with a flat list: a setHeader per header copies them into an object first.
    res.writeHead(answer.status, withExtra(answer.headers, extra));
    res.end(head ? undefined : answer.body);
    return answer.status;
  }
  const { value, headers, trailer } = perResponse.next();
  res.writeHead(answer.status, [...answer.headers, ...extra, ...headers]);
  if (head) {
    res.end();
    return answer.status;
  }
  // The stored pieces around the value in one corked write (one writev), never a copy of the
  // body (bench/README.md#the-figures-behind-the-codes-comments).
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
  return answer.status;
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
 * a client that has left, as with Koa's own respond().
 */
export function respond(ctx: Context, answer: Answer, extra?: readonly string[]): void {
  ctx.respond = false;
  if (canAnswer(ctx.res)) {
    writeAnswer(ctx.req, ctx.res, answer, extra);
  }
}

function withExtra(headers: readonly string[], extra: readonly string[]): string[] {
  // writeHead takes the list as is when nothing is added: no copy per response.
  return (extra.length === 0 ? headers : [...headers, ...extra]) as string[];
}
