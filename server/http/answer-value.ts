// An answer as a value: everything the origin will send for a request, decided before a byte
// goes out (but the bytes of a streamed body). answer.ts makes and writes them; encodings.ts makes
// their content codings.
import type { Readable } from 'node:stream';
import type { Coding } from './content-coding.ts';

/**
 * A body with slots that take a new value on every response (a CSP nonce: csp/nonce-template.ts).
 * The stored body holds placeholders of the value's length, so every length and offset holds.
 */
export interface PerResponseBody {
  /** The stored body between its slots (views, not copies): what goes out around each value. */
  readonly segments: readonly Buffer[];
  /** The length of every value (a nonce's 22 bytes); undefined when it varies. */
  readonly valueLength?: number;
  /**
   * This response's value for every slot, the headers that go with it (never on a 304), and what
   * follows the last segment when it depends on the value (a gzip trailer: http/gzip-slots.ts).
   */
  next(): { value: Buffer; headers: readonly string[]; trailer?: Buffer };
}

/** An answer, decided before a byte goes out. */
export interface Answer {
  readonly status: number;
  /** Every header of the full answer, Content-Length included, flat (name, value, …): one writeHead takes it as is. */
  readonly headers: readonly string[];
  /** What a 304 repeats (RFC 9110 §15.4.5), flat: nothing that describes the body it does not carry. */
  readonly notModifiedHeaders: readonly string[];
  readonly body: Buffer;
  /**
   * The body as it comes, when it is not all there before the head goes out (a file koa-static
   * reads, a page whose parts are made as it goes out): `body` is then empty, and its length is in
   * `headers` only when known (else it goes out chunked).
   */
  readonly stream?: Readable;
  /**
   * The body as several buffers, written in one corked write (one writev) and never copied into one:
   * a page copied around a visitor's parts (pages/personal/personal-answer.ts). `body` is then empty.
   * Never compressed on send.
   */
  readonly pieces?: readonly Buffer[];
  /** In the shape `fresh` compares a request with; undefined: never a 304 (an error page, say). */
  readonly validators: { readonly etag: string; readonly 'last-modified'?: string } | undefined;
  /** The body takes a value per response (its slots); undefined: it goes out as it is. */
  readonly perResponse?: PerResponseBody;
  /**
   * The same content in other content codings, compressed once (the build's copies of a file, a
   * cached page): writeAnswer sends the one the request's Accept-Encoding prefers, each with its own
   * headers and validator. Its headers (and this answer's) say `Vary: Accept-Encoding`.
   */
  readonly encodings?: Encodings;
  /**
   * Compressed as it goes out, in the coding the request prefers (http/encodings.ts): an answer made
   * for one response (a render nobody stores), or whose body changes per response (a nonced page).
   */
  readonly compressOnSend?: boolean;
}

/** An answer's stored codings: `answers[i]` is the answer in `codings[i]`, best first. */
export interface Encodings {
  readonly codings: readonly Coding[];
  readonly answers: readonly Answer[];
}
