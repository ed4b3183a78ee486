// Content codings (RFC 9110 §8.4, §12.5.3): which coding a request's Accept-Encoding prefers among
// those an answer can be sent in, and the compressors the origin uses, each at the level its use was
// measured for (docs/architecture.md#what-each-optimization-saves). No third-party code: node:zlib.
import { Transform } from 'node:stream';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';

/** The content codings the origin sends. `identity` (no coding) is the absence of one. */
export type Coding = 'br' | 'gzip' | 'zstd';

/**
 * Codings of answers compressed once and kept (the build's files, cached pages): brotli first, as it
 * is the smallest; zstd would only add bytes to memory for clients that take brotli too.
 */
export const STORED_CODINGS: readonly Coding[] = ['br', 'gzip'];
/**
 * zstd, where this Node has it (22.15 and later): the npm scripts and the image run Node 24, but a
 * plain `node dist/server/server.mjs` on an older Node still starts, without it.
 */
const zstdCompressSync = (zlib as Partial<typeof zlib>).zstdCompressSync;
/** Codings of answers compressed as they go out: zstd first, the cheapest per KB at a low level. */
export const ON_SEND_CODINGS: readonly Coding[] =
  zstdCompressSync === undefined ? ['br', 'gzip'] : ['zstd', 'br', 'gzip'];

/** The q-values one Accept-Encoding header gives, by lower-case coding name; `*` under '*'. */
type Weights = ReadonlyMap<string, number>;

/** `token [ OWS ";" OWS "q=" qvalue ]`, one member of the list (RFC 9110 §12.5.3, §12.4.2). */
const MEMBER =
  /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*(?:;[ \t]*[qQ]=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?$/;
/** Headers longer than this are parsed every time, never remembered (browsers send ~30 bytes). */
const MEMO_MAX_HEADER = 256;
/** Distinct headers remembered at most: a handful of browsers send a handful of values. */
const MEMO_MAX_ENTRIES = 512;
const memo = new Map<string, Weights>();

/**
 * The q-value of each coding the header names. A member that does not parse (a bad token, a q out
 * of range, another parameter) is ignored, as a member the server does not know; a coding named
 * twice keeps its first weight. `x-gzip` is gzip (RFC 9110 §8.4.1.3).
 */
function weightsOf(header: string): Weights {
  const remembered = memo.get(header);
  if (remembered !== undefined) {
    return remembered;
  }
  const weights = new Map<string, number>();
  for (const member of header.split(',')) {
    const match = MEMBER.exec(member.trim());
    if (match === null) {
      continue;
    }
    const name = match[1].toLowerCase() === 'x-gzip' ? 'gzip' : match[1].toLowerCase();
    if (!weights.has(name)) {
      weights.set(name, match[2] === undefined ? 1 : Number(match[2]));
    }
  }
  if (header.length <= MEMO_MAX_HEADER) {
    if (memo.size >= MEMO_MAX_ENTRIES) {
      memo.clear();
    }
    memo.set(header, weights);
  }
  return weights;
}

/**
 * The coding to send among `available` (the origin's order of preference), or undefined for the
 * answer as it is (identity). Without the header, with an empty one, or when no coding is
 * acceptable, identity: a client that asks for none gets none, and the origin never answers 406.
 * Otherwise the coding with the highest q (a tie goes to the earlier in `available`), unless
 * identity's is higher: identity's q is its own, else that of `*`; a client that names codings but
 * neither identity nor `*` prefers any of them to identity.
 */
export function negotiate(
  header: string | undefined,
  available: readonly Coding[],
): Coding | undefined {
  if (header === undefined || header === '' || available.length === 0) {
    return undefined;
  }
  const weights = weightsOf(header);
  const star = weights.get('*');
  let best: Coding | undefined;
  let bestQ = 0;
  for (const coding of available) {
    const q = weights.get(coding) ?? star ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identityQ = weights.get('identity') ?? star ?? 0;
  return bestQ >= identityQ ? best : undefined;
}

/** Smaller bodies go out as they are: a coding's own framing would eat most of what it saves. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * Types worth compressing: text, scripts, JSON, XML, SVG, icons, uncompressed fonts. Images,
 * woff2, archives and media already are compressed: compressing them again costs CPU for nothing.
 */
const COMPRESSIBLE =
  /^(?:text\/|application\/(?:javascript|json|xml|manifest\+json|wasm|[\w.+-]+\+(?:json|xml))\b|image\/(?:svg\+xml|x-icon|vnd\.microsoft\.icon|bmp)\b|font\/(?:ttf|otf)\b)/i;

export function compressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType);
}

/**
 * Levels for an answer compressed as it goes out, where each coding's cost per KB levels off
 * against the bytes it saves (docs/architecture.md#what-each-optimization-saves).
 */
const ON_SEND_LEVEL: Record<Coding, number> = { zstd: 3, br: 4, gzip: 3 };
/**
 * Levels for a page compressed once and kept while many requests reuse it: past these, each level
 * costs a large share of a render for about 1% of bytes (docs/architecture.md#what-each-optimization-saves).
 */
const STORED_LEVEL = { br: 6, gzip: 6 } as const;
/** gzip's, for the pieces of a nonced page (http/gzip-slots.ts). */
export const STORED_GZIP_LEVEL = STORED_LEVEL.gzip;

function brotliOptions(quality: number, size: number) {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  };
}

/** `body` in `coding`, now, at the level for an answer compressed as it goes out. */
export function compressOnSend(coding: Coding, body: Buffer): Buffer {
  const level = ON_SEND_LEVEL[coding];
  switch (coding) {
    case 'zstd':
      return zstdCompressSync!(body, { params: { [constants.ZSTD_c_compressionLevel]: level } });
    case 'br':
      return brotliCompressSync(body, brotliOptions(level, body.length));
    case 'gzip':
      return gzipSync(body, { level });
  }
}

/**
 * A compressor of `coding` for a body that goes out as it is made (a streamed answer), at the
 * on-send level: each chunk it is given is flushed as it comes, so what is ready reaches the client
 * without waiting for the rest (a page's shared bytes before its personal parts).
 */
export function compressingStream(coding: Coding): Transform {
  const level = ON_SEND_LEVEL[coding];
  switch (coding) {
    case 'zstd':
      return flushing(
        zlib.createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: level } }),
        constants.ZSTD_e_flush,
      );
    case 'br':
      return flushing(
        zlib.createBrotliCompress(brotliOptions(level, 0)),
        constants.BROTLI_OPERATION_FLUSH,
      );
    case 'gzip':
      return flushing(zlib.createGzip({ level }), constants.Z_SYNC_FLUSH);
  }
}

/** A compressor that flushes after every chunk written to it. */
function flushing(
  compressor: Transform & { flush(kind: number, done: () => void): void },
  kind: number,
): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      compressor.write(chunk);
      compressor.flush(kind, () => {
        let piece: Buffer | null;
        while ((piece = compressor.read() as Buffer | null) !== null) {
          this.push(piece);
        }
        done();
      });
    },
    final(done) {
      compressor.end();
      compressor.on('data', (piece: Buffer) => this.push(piece));
      compressor.once('end', () => done());
      compressor.once('error', done);
    },
  });
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Pages compressed for the store one after another, and at most this many waiting: 200 of an 86 kB
 * page at once on the thread pool cost 4.6 ms CPU each against 1.9 ms one at a time (2 cores), and
 * a burst of new pages halved the renders per second (bench --quick ssr: 69 against 164 req/s).
 */
const STORE_QUEUE = 8;
let storeLane: Promise<unknown> = Promise.resolve();
let storeWaiting = 0;

/**
 * `body` in every stored coding (STORED_CODINGS), compressed off the event loop (zlib's thread pool):
 * for a cached page, once however many requests it answers. Undefined when STORE_QUEUE pages wait
 * already: the page is kept as it is and compressed as it goes out, as one never stored is.
 */
export async function compressForStore(body: Buffer): Promise<[Coding, Buffer][] | undefined> {
  if (storeWaiting >= STORE_QUEUE) {
    return undefined;
  }
  storeWaiting++;
  const compressed = storeLane.then(() =>
    Promise.all([
      brotliAsync(body, brotliOptions(STORED_LEVEL.br, body.length)),
      gzipAsync(body, { level: STORED_LEVEL.gzip }),
    ]),
  );
  storeLane = compressed.catch(() => undefined);
  try {
    const [br, gz] = await compressed;
    return [
      ['br', br],
      ['gzip', gz],
    ];
  } finally {
    storeWaiting--;
  }
}

/**
 * `body` at the build's levels: brotli at its highest quality, gzip at 9. Written once per build
 * (files/compress-build.ts), so the time is spent where nobody waits for it.
 */
export async function compressForBuild(coding: 'br' | 'gzip', body: Buffer): Promise<Buffer> {
  return coding === 'br'
    ? brotliAsync(body, brotliOptions(constants.BROTLI_MAX_QUALITY, body.length))
    : gzipAsync(body, { level: 9 });
}
