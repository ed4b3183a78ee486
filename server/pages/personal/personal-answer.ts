// A shared page with this visitor's parts in it, as one answer that streams: the page's bytes up to
// the first part go out at once, at the speed of a cached page, and each part as it is ready (its
// placeholder when its render failed or ran out of time). What it holds is this visitor's alone:
// private, no validator (its bytes are known only once sent, and a 304 must never give back a part
// that changed), never a shared cache's. In gzip when the visitor takes it, without compressing the
// page again: its pieces between the parts were deflated once (http/gzip-slots.ts), and each part
// goes in as stored blocks; only the CRC is computed per response. A client that takes brotli and
// not gzip gets brotli, compressed as it goes out, as a nonced page is.
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { NonceSlots } from '../../csp/nonce-template.ts';
import { answer, type Answer } from '../../http/answer.ts';
import { negotiate } from '../../http/content-coding.ts';
import {
  deflateEach,
  FINAL_BLOCK,
  GZIP_HEADER,
  gzipTrailer,
  storedBlocks,
} from '../../http/gzip-slots.ts';
import { STORED_GZIP_LEVEL } from '../../http/content-coding.ts';
import type { PageParts } from '../../render-cache/page-entry.ts';

/** What a personal answer says of caching: for this browser alone, asked again every time. */
export const PERSONAL_CACHE_CONTROL = 'private, no-cache';

/** Headers of the shared page that describe its shared life or its bytes: a personal answer has neither. */
const NOT_PERSONAL = new Set([
  'cache-control',
  'cdn-cache-control',
  'surrogate-control',
  'etag',
  'last-modified',
  'content-length',
  'content-encoding',
  'expires',
  'age',
]);

/** The shared page cut at its parts: the pieces around them and each part's placeholder. */
interface Cut {
  pieces: Buffer[];
  placeholders: Buffer[];
}

const cuts = new WeakMap<PageParts, Cut>();
const deflated = new WeakMap<PageParts, Promise<Buffer[]>>();

/** The pieces of `body` around `parts`, cut once per stored page. */
function cutOf(body: Buffer, parts: PageParts): Cut {
  let cut = cuts.get(parts);
  if (cut === undefined) {
    const pieces: Buffer[] = [];
    const placeholders: Buffer[] = [];
    let at = 0;
    for (const { start, end } of parts.slots) {
      pieces.push(body.subarray(at, start));
      placeholders.push(body.subarray(start, end));
      at = end;
    }
    pieces.push(body.subarray(at));
    cut = { pieces, placeholders };
    cuts.set(parts, cut);
  }
  return cut;
}

export interface PersonalAnswerInput {
  /** The shared page's answer as stored (its identity body; a nonced page's slots). */
  page: Answer;
  parts: PageParts;
  /** Per slot, this visitor's part, or undefined for its placeholder; settled as each is ready. */
  filled: readonly Promise<Buffer | undefined>[];
  acceptEncoding: string | undefined;
}

/**
 * The answer for one visitor: the page's headers less those of its shared life, private, and its
 * body streamed. A nonced page (CSP) gets this response's nonce in every slot of the page and of the
 * parts, and is compressed as it goes out; any other in gzip around the parts, or as it is.
 */
export async function personalAnswer({
  page,
  parts,
  filled,
  acceptEncoding,
}: PersonalAnswerInput): Promise<Answer> {
  const headers: string[] = [];
  for (let i = 0; i < page.headers.length; i += 2) {
    if (!NOT_PERSONAL.has(page.headers[i].toLowerCase())) {
      headers.push(page.headers[i], page.headers[i + 1]);
    }
  }
  headers.push('Cache-Control', PERSONAL_CACHE_CONTROL);
  const nonced = page.perResponse;
  if (nonced instanceof NonceSlots) {
    // This response's nonce in every slot of the page and of the parts (rendered with the
    // placeholder), then compressed as it goes out.
    const { value, headers: policy } = nonced.next();
    headers.push(...policy);
    const placeholder = Buffer.from(nonced.policy.placeholder, 'latin1');
    const { pieces, placeholders } = cutOf(page.body, parts);
    const fill = (piece: Buffer) => withNonce(piece, placeholder, value);
    return answer(page.status, headers, EMPTY, {
      compress: true,
      stream: Readable.from(plainPieces(pieces, placeholders, filled, fill)),
    });
  }
  const { pieces, placeholders } = cutOf(page.body, parts);
  // gzip first: its pieces cost a CRC per response, brotli a whole compression (a client that
  // takes brotli and not gzip gets it, compressed as it goes out).
  const coding = negotiate(acceptEncoding, ['gzip', 'br']);
  if (coding !== 'gzip') {
    return answer(page.status, headers, EMPTY, {
      compress: coding === 'br',
      stream: Readable.from(plainPieces(pieces, placeholders, filled, (piece) => piece)),
    });
  }
  let ready = deflated.get(parts);
  if (ready === undefined) {
    ready = deflateEach(pieces, STORED_GZIP_LEVEL);
    deflated.set(parts, ready);
  }
  const pieceCodes = await ready;
  headers.push('Content-Encoding', 'gzip');
  return answer(page.status, headers, EMPTY, {
    compress: false,
    stream: Readable.from(gzipPieces(pieces, pieceCodes, placeholders, filled)),
  });
}

const EMPTY = Buffer.alloc(0);

/** The page and its parts as they are, each part when ready. */
async function* plainPieces(
  pieces: readonly Buffer[],
  placeholders: readonly Buffer[],
  filled: readonly Promise<Buffer | undefined>[],
  fill: (piece: Buffer) => Buffer,
): AsyncGenerator<Buffer> {
  for (let i = 0; i < placeholders.length; i++) {
    yield fill(pieces[i]);
    yield fill((await filled[i]) ?? placeholders[i]);
  }
  yield fill(pieces[pieces.length - 1]);
}

/** One gzip member: the deflated pieces, each part as stored blocks, the trailer of the whole. */
async function* gzipPieces(
  pieces: readonly Buffer[],
  codes: readonly Buffer[],
  placeholders: readonly Buffer[],
  filled: readonly Promise<Buffer | undefined>[],
): AsyncGenerator<Buffer> {
  let crc = 0;
  let size = 0;
  const plain = (bytes: Buffer) => {
    crc = crc32(bytes, crc);
    size += bytes.length;
  };
  yield GZIP_HEADER;
  for (let i = 0; i < placeholders.length; i++) {
    plain(pieces[i]);
    yield codes[i];
    const part = (await filled[i]) ?? placeholders[i];
    plain(part);
    yield* storedBlocks(part);
  }
  const last = pieces.length - 1;
  plain(pieces[last]);
  yield codes[last];
  yield FINAL_BLOCK;
  yield gzipTrailer(crc, size);
}

/** `piece` with `value` wherever `placeholder` is (the same length): a copy when there is one. */
function withNonce(piece: Buffer, placeholder: Buffer, value: Buffer): Buffer {
  let at = piece.indexOf(placeholder);
  if (at === -1) {
    return piece;
  }
  const copy = Buffer.from(piece);
  for (; at !== -1; at = copy.indexOf(placeholder, at + placeholder.length)) {
    value.copy(copy, at);
  }
  return copy;
}
