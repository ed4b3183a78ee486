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
import { combineCrc, type CrcOperator, crcShift } from '../../http/crc-shift.ts';
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
/** The pieces in gzip: each deflated once, its CRC-32 and the shift that appends it to a CRC. */
interface GzipPieces {
  codes: Buffer[];
  crcs: number[];
  shifts: CrcOperator[];
}

/** A stored page's pieces in gzip: being made, and once made (what personalAnswerNow can use). */
interface Gzipped {
  ready: Promise<GzipPieces>;
  made?: GzipPieces;
}

const gzipped = new WeakMap<PageParts, Gzipped>();

/** The pieces of a page in gzip, made once per stored page. */
function gzipPiecesOf(parts: PageParts, pieces: readonly Buffer[]): Promise<GzipPieces> {
  const known = gzipped.get(parts);
  if (known !== undefined) {
    return known.ready;
  }
  const entry: Gzipped = {
    ready: deflateEach(pieces, STORED_GZIP_LEVEL).then(
      (codes) =>
        (entry.made = {
          codes,
          crcs: pieces.map((piece) => crc32(piece)),
          shifts: pieces.map((piece) => crcShift(piece.length)),
        }),
    ),
  };
  gzipped.set(parts, entry);
  return entry.ready;
}

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

/** A visitor's part as it is known: now (kept, or its placeholder), or once rendered. */
export type Filled = Buffer | undefined | Promise<Buffer | undefined>;

export interface PersonalAnswerInput {
  /** The shared page's answer as stored (its identity body; a nonced page's slots). */
  page: Answer;
  parts: PageParts;
  /** Per slot, this visitor's part, or undefined for its placeholder: known now, or when ready. */
  filled: readonly Filled[];
  acceptEncoding: string | undefined;
}

/**
 * The answer for one visitor: the page's headers less those of its shared life, private. When every
 * part is known now (kept for the visitor, or a placeholder) or within HOLD_MS, one body of known
 * length, written at once: streamed, each piece was a chunk of its own and a write of its own (a
 * returning visitor's page cost 5× an anonymous hit's CPU). Otherwise streamed, each part as it is
 * ready. A nonced page (CSP) gets this response's nonce in every slot of the page and of the parts,
 * and is compressed as it goes out; any other in gzip around the parts, or as it is.
 */
export async function personalAnswer({
  page,
  parts,
  filled: given,
  acceptEncoding,
}: PersonalAnswerInput): Promise<Answer> {
  const filled = (await readyWithin(given, HOLD_MS)) ?? given;
  const coding = codingOf(page, acceptEncoding);
  const gzip =
    coding === 'gzip' ? await gzipPiecesOf(parts, cutOf(page.body, parts).pieces) : undefined;
  const making = { page, parts, coding, gzip };
  return allKnown(filled) ? answerNow(making, filled) : answerStreamed(making, filled);
}

/**
 * The same answer made at once, every part known (kept for the visitor, or a placeholder): what
 * the fast path sends a returning visitor. Undefined when it cannot be made without waiting: in
 * gzip before the page's pieces were deflated (the first such answer of a stored page makes them).
 */
export function personalAnswerNow({
  page,
  parts,
  filled,
  acceptEncoding,
}: Omit<PersonalAnswerInput, 'filled'> & { filled: readonly Known[] }): Answer | undefined {
  const coding = codingOf(page, acceptEncoding);
  const gzip = coding === 'gzip' ? gzipped.get(parts)?.made : undefined;
  return coding === 'gzip' && gzip === undefined
    ? undefined
    : answerNow({ page, parts, coding, gzip }, filled);
}

/** A part known now: the visitor's, or undefined for its placeholder. */
type Known = Buffer | undefined;

function allKnown(filled: readonly Filled[]): filled is readonly Known[] {
  return filled.every((part) => !(part instanceof Promise));
}

/**
 * The coding of a page's personal answer: none for a nonced page (compressed as it goes out, its
 * nonce per response); else gzip first, since its pieces cost the parts' CRC per response and
 * brotli a whole compression (a client that takes brotli and not gzip gets it).
 */
function codingOf(page: Answer, acceptEncoding: string | undefined): 'gzip' | 'br' | undefined {
  return page.perResponse instanceof NonceSlots
    ? undefined
    : (negotiate(acceptEncoding, ['gzip', 'br']) as 'gzip' | 'br' | undefined);
}

/** What both kinds of answer start from. */
interface Begun {
  /** The page's headers less those of its shared life, its Cache-Control: this visitor's. */
  headers: string[];
  pieces: readonly Buffer[];
  placeholders: readonly Buffer[];
  /** A nonced page's: this response's nonce in every slot (its policy is in `headers`). */
  fill: ((piece: Buffer) => Buffer) | undefined;
}

function begin(page: Answer, parts: PageParts): Begun {
  const headers: string[] = [];
  for (let i = 0; i < page.headers.length; i += 2) {
    if (!NOT_PERSONAL.has(page.headers[i].toLowerCase())) {
      headers.push(page.headers[i], page.headers[i + 1]);
    }
  }
  headers.push('Cache-Control', PERSONAL_CACHE_CONTROL);
  const { pieces, placeholders } = cutOf(page.body, parts);
  const nonced = page.perResponse;
  if (!(nonced instanceof NonceSlots)) {
    return { headers, pieces, placeholders, fill: undefined };
  }
  const { value, headers: policy } = nonced.next();
  headers.push(...policy);
  const placeholder = Buffer.from(nonced.policy.placeholder, 'latin1');
  return { headers, pieces, placeholders, fill: (piece) => withNonce(piece, placeholder, value) };
}

const same = (piece: Buffer) => piece;

/** What an answer is made of besides its parts: the page, its coding, its pieces in gzip if so. */
interface Making {
  page: Answer;
  parts: PageParts;
  coding: 'gzip' | 'br' | undefined;
  gzip: GzipPieces | undefined;
}

/** Every part known: one body of known length (a nonced page's compressed as it goes out). */
function answerNow({ page, parts, coding, gzip }: Making, filled: readonly Known[]): Answer {
  const { headers, pieces, placeholders, fill } = begin(page, parts);
  if (fill !== undefined) {
    return answer(
      page.status,
      headers,
      Buffer.concat(plainNow(pieces, placeholders, filled, fill)),
    );
  }
  if (gzip === undefined) {
    const now = plainNow(pieces, placeholders, filled, same);
    return coding === 'br'
      ? answer(page.status, headers, Buffer.concat(now), { compress: true })
      : answer(page.status, headers, EMPTY, { pieces: now });
  }
  headers.push('Content-Encoding', 'gzip');
  const members = gzipMember(pieces, gzip, placeholders, filled);
  const chunks: Buffer[] = [];
  for (let next = members.next(); !next.done; next = members.next()) {
    chunks.push(next.value as Buffer);
  }
  return answer(page.status, headers, EMPTY, { pieces: chunks });
}

/** A part still rendering: streamed, each part as it is ready. */
function answerStreamed({ page, parts, coding, gzip }: Making, filled: readonly Filled[]): Answer {
  const { headers, pieces, placeholders, fill } = begin(page, parts);
  if (fill !== undefined || gzip === undefined) {
    return answer(page.status, headers, EMPTY, {
      compress: fill !== undefined || coding === 'br',
      stream: Readable.from(plainPieces(pieces, placeholders, filled, fill ?? same)),
    });
  }
  headers.push('Content-Encoding', 'gzip');
  return answer(page.status, headers, EMPTY, {
    compress: false,
    stream: Readable.from(awaited(gzipMember(pieces, gzip, placeholders, filled))),
  });
}

const EMPTY = Buffer.alloc(0);

/**
 * How long the page waits for parts being rendered before its first bytes go: parts ready by then
 * (a new visitor's greeting renders in 1–3 ms) go out in the same write as the page around them, one
 * body of known length, painted with it, instead of a chunked stream with a write per piece. A part
 * slower than this never holds the page longer: it streams from then on.
 */
const HOLD_MS = 20;

/** The parts, every one of them known, if they all are within `ms`; else undefined. */
async function readyWithin(filled: readonly Filled[], ms: number): Promise<Filled[] | undefined> {
  if (filled.every((part) => !(part instanceof Promise))) {
    return undefined;
  }
  let stop = (): void => undefined;
  const late = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    stop = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([Promise.all(filled.map(async (part) => part)), late]);
  } finally {
    stop();
  }
}

/** The page and its parts as they are, every part known now. */
function plainNow(
  pieces: readonly Buffer[],
  placeholders: readonly Buffer[],
  filled: readonly Filled[],
  fill: (piece: Buffer) => Buffer,
): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < placeholders.length; i++) {
    out.push(fill(pieces[i]), fill((filled[i] as Buffer | undefined) ?? placeholders[i]));
  }
  out.push(fill(pieces[pieces.length - 1]));
  return out;
}

/** The page and its parts as they are, each part when ready. */
async function* plainPieces(
  pieces: readonly Buffer[],
  placeholders: readonly Buffer[],
  filled: readonly Filled[],
  fill: (piece: Buffer) => Buffer,
): AsyncGenerator<Buffer> {
  for (let i = 0; i < placeholders.length; i++) {
    yield fill(pieces[i]);
    yield fill((await filled[i]) ?? placeholders[i]);
  }
  yield fill(pieces[pieces.length - 1]);
}

/**
 * One gzip member: the deflated pieces, each part as stored blocks, the trailer of the whole. It
 * yields a part's promise where the part is not known yet (awaited resolves it); the CRC runs over
 * the parts' bytes only, each piece appended by its precomputed shift.
 */
function* gzipMember(
  pieces: readonly Buffer[],
  { codes, crcs, shifts }: GzipPieces,
  placeholders: readonly Buffer[],
  filled: readonly Filled[],
): Generator<Buffer | Promise<Buffer | undefined>, void, Buffer | undefined> {
  let crc = crcs[0];
  let size = pieces[0].length;
  yield GZIP_HEADER;
  yield codes[0];
  for (let i = 0; i < placeholders.length; i++) {
    const given = filled[i];
    const part = (given instanceof Promise ? yield given : given) ?? placeholders[i];
    crc = crc32(part, crc);
    size += part.length;
    yield* storedBlocks(part);
    crc = combineCrc(crc, crcs[i + 1], shifts[i + 1]);
    size += pieces[i + 1].length;
    yield codes[i + 1];
  }
  yield FINAL_BLOCK;
  yield gzipTrailer(crc, size);
}

/** The chunks of `member`, each part's promise awaited and its value handed back. */
async function* awaited(
  member: Generator<Buffer | Promise<Buffer | undefined>, void, Buffer | undefined>,
): AsyncGenerator<Buffer> {
  let next = member.next();
  while (!next.done) {
    if (next.value instanceof Promise) {
      next = member.next(await next.value);
    } else {
      yield next.value;
      next = member.next();
    }
  }
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
