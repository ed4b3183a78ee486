// A page whose body takes a value per response (a CSP nonce) in gzip, compressed once: each piece
// between the slots deflated on its own (the dictionary reset after it, so nothing refers across a
// slot), each response's value sent as a stored (uncompressed) deflate block in its slot, a final
// empty block, and the gzip trailer, whose CRC is all a response computes. One gzip member, as
// RFC 1952 and every browser read it. Measured against compressing the whole page per response:
// 12.4 against 11.0 kB, 15 against 94 µs of CPU per response (docs/architecture.md#what-each-optimization-saves).
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import type { PerResponseBody } from './answer-value.ts';

/** A gzip header: no name, no time, no extra fields (RFC 1952 §2.3), "unknown" OS. */
export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
/** The last block: final, fixed Huffman codes, end-of-block only. */
export const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

const deflateRawAsync = promisify(deflateRaw);

/** Deflate options for a piece: ends byte-aligned with the dictionary reset, the stream left open. */
const piece = (level: number) => ({ level, finishFlush: constants.Z_FULL_FLUSH });

/** The pieces of `slots` deflated at `level`, off the event loop. */
export async function deflatePieces(slots: PerResponseBody, level: number): Promise<Buffer[]> {
  return deflateEach(slots.segments, level);
}

/** Each of `pieces` deflated at `level` on its own (byte-aligned, nothing referring across), off the event loop. */
export async function deflateEach(pieces: readonly Buffer[], level: number): Promise<Buffer[]> {
  return Promise.all(pieces.map((segment) => deflateRawAsync(segment, piece(level))));
}

/** The same, now: for pages compressed once at startup. */
export function deflatePiecesNow(slots: PerResponseBody, level: number): Buffer[] {
  return slots.segments.map((segment) => deflateRawSync(segment, piece(level)));
}

/** A stored block's header for a value of `length` bytes: not final, LEN, NLEN (RFC 1951 §3.2.4). */
function storedBlockHeader(length: number): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt16LE(length, 1);
  header.writeUInt16LE(~length & 0xffff, 3);
  return header;
}

/** The largest stored block (RFC 1951 §3.2.4: LEN is 16 bits). */
const MAX_STORED = 0xffff;

/** `value` as stored (uncompressed) deflate blocks, none final: what a value of any length takes. */
export function storedBlocks(value: Buffer): Buffer[] {
  const blocks: Buffer[] = [];
  for (let at = 0; at < value.length; at += MAX_STORED) {
    const chunk = value.subarray(at, at + MAX_STORED);
    blocks.push(storedBlockHeader(chunk.length), chunk);
  }
  return blocks;
}

/** The gzip trailer of a body whose plain bytes had `crc` and `size` (RFC 1952 §2.3.1). */
export function gzipTrailer(crc: number, size: number): Buffer {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return trailer;
}

/**
 * The gzip body of a per-response body from its `deflated` pieces: the pieces around each
 * response's value as stored blocks, and per response the trailer of that response's page; and its
 * length, the same for every response (a value is always `valueLength` bytes: a nonce's 22).
 */
export function gzipAroundSlots(
  slots: PerResponseBody,
  deflated: readonly Buffer[],
  valueLength: number,
): { perResponse: PerResponseBody; length: number } {
  const stored = storedBlockHeader(valueLength);
  const last = deflated.length - 1;
  const segments = deflated.map((body, i) =>
    Buffer.concat([...(i === 0 ? [GZIP_HEADER] : []), body, i < last ? stored : FINAL_BLOCK]),
  );
  const size = slots.segments.reduce((sum, segment) => sum + segment.length, last * valueLength);
  const perResponse: PerResponseBody = {
    segments,
    next() {
      const { value, headers } = slots.next();
      let crc = 0;
      for (let i = 0; i <= last; i++) {
        crc = crc32(slots.segments[i], crc);
        if (i < last) {
          crc = crc32(value, crc);
        }
      }
      return { value, headers, trailer: gzipTrailer(crc, size) };
    },
  };
  const length = segments.reduce((sum, segment) => sum + segment.length, last * valueLength + 8);
  return { perResponse, length };
}
