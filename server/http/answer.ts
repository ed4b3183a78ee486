// What the origin sends for a request, as a value, and the one function that writes it. Files,
// prerendered pages, rendered and cached pages and the client-side shell all go out through
// writeAnswer, from the fast path and from Koa's steps alike (as Koa's own respond() is its one
// writer, with `ctx.respond = false` as the way out): one set of rules for 304, HEAD and lengths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';
import type { Context } from 'koa';

/** The Cache-Control of an answer that says nothing else: stored, but revalidated before each use. */
export const REVALIDATE = 'no-cache';

/**
 * A body with slots that take a new value on every response (a CSP nonce: csp/nonce-template.ts).
 * The stored body holds placeholders of the value's length, so every length and offset holds.
 */
export interface PerResponseBody {
  /** The stored body between its slots (views, not copies): what goes out around each value. */
  readonly segments: readonly Buffer[];
  /** This response's value for every slot, and the headers that go with it (never on a 304). */
  next(): { value: Buffer; headers: readonly string[] };
}

/** An answer, decided before a byte goes out. */
export interface Answer {
  readonly status: number;
  /** Every header of the full answer, Content-Length included, flat (name, value, …): one writeHead takes it as is. */
  readonly headers: readonly string[];
  /** What a 304 repeats (RFC 9110 §15.4.5), flat: nothing that describes the body it does not carry. */
  readonly notModifiedHeaders: readonly string[];
  readonly body: Buffer;
  /** In the shape `fresh` compares a request with; undefined: never a 304 (an error page, say). */
  readonly validators: { readonly etag: string; readonly 'last-modified'?: string } | undefined;
  /** The body takes a value per response (its slots); undefined: it goes out as it is. */
  readonly perResponse?: PerResponseBody;
}

/** Headers that describe a body (lower case): never on a 304, which has none. */
const BODY_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'accept-ranges',
]);

/**
 * The answer for a body and its headers (Content-Length left to this): its 304 carries the headers
 * but those that describe the body and those named in `fullOnly` (in lower case).
 */
export function answer(
  status: number,
  headers: readonly string[],
  body: Buffer,
  options: {
    validators?: Answer['validators'];
    perResponse?: PerResponseBody;
    fullOnly?: ReadonlySet<string>;
  } = {},
): Answer {
  const notModifiedHeaders: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i].toLowerCase();
    if (!BODY_HEADERS.has(name) && !options.fullOnly?.has(name)) {
      notModifiedHeaders.push(headers[i], headers[i + 1]);
    }
  }
  return {
    status,
    headers: [...headers, 'Content-Length', String(body.length)],
    notModifiedHeaders,
    body,
    validators: options.validators,
    perResponse: options.perResponse,
  };
}

const NO_HEADERS: readonly string[] = [];

/**
 * Writes `answer`, with `extra` headers of this response (Age, Cache-Status) on its 200 and its 304
 * alike: a 304 when the request's validators match, no body for HEAD, the per-response value in
 * every slot. Returns the status sent.
 */
export function writeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  answer: Answer,
  extra: readonly string[] = NO_HEADERS,
): number {
  if (answer.validators !== undefined && fresh(req.headers, answer.validators)) {
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
  const { value, headers } = perResponse.next();
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
  res.end(segments[last]);
  res.uncork();
  return answer.status;
}

/**
 * A Koa step answers through writeAnswer too: Koa then writes nothing of its own. Nothing goes to
 * a client that has left, as with Koa's own respond().
 */
export function respond(ctx: Context, answer: Answer, extra?: readonly string[]): void {
  ctx.respond = false;
  if (ctx.writable) {
    writeAnswer(ctx.req, ctx.res, answer, extra);
  }
}

function withExtra(headers: readonly string[], extra: readonly string[]): string[] {
  // writeHead takes the list as is when nothing is added: no copy per response.
  return (extra.length === 0 ? headers : [...headers, ...extra]) as string[];
}
