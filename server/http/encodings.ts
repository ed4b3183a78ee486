// An answer in a content coding: the same content, its own body, length and validator. Stored
// codings are made once (the build's copies of a file, a page the render cache keeps); an answer
// made for one response, or whose body changes per response, is compressed as it goes out.
import type { Answer, PerResponseBody } from './answer-value.ts';
import {
  type Coding,
  compressForStore,
  compressingStream,
  compressOnSend,
  negotiate,
  ON_SEND_CODINGS,
  STORED_GZIP_LEVEL,
} from './content-coding.ts';
import { strongEtag } from './entity-tag.ts';
import { deflatePieces, gzipAroundSlots } from './gzip-slots.ts';

const EMPTY = Buffer.alloc(0);

/** The representation of `answer` to send to a request with this Accept-Encoding. */
export function representationFor(answer: Answer, acceptEncoding: string | undefined): Answer {
  const { encodings } = answer;
  if (encodings !== undefined) {
    const coding = negotiate(acceptEncoding, encodings.codings);
    return coding === undefined ? answer : encodings.answers[encodings.codings.indexOf(coding)];
  }
  if (answer.compressOnSend !== true) {
    return answer;
  }
  const coding = negotiate(acceptEncoding, ON_SEND_CODINGS);
  if (coding === undefined) {
    return answer;
  }
  if (answer.perResponse !== undefined) {
    return compressedPerResponse(answer, answer.perResponse, coding);
  }
  if (answer.stream !== undefined) {
    // Compressed as it comes, each piece flushed: no length, and no validator of its own bytes.
    return {
      ...answer,
      headers: recoded(answer.headers, coding, undefined),
      stream: answer.stream.pipe(compressingStream(coding)),
      validators: undefined,
      compressOnSend: false,
    };
  }
  // Made for this response alone: compressed now, and its validator is the digest of those bytes.
  const body = compressOnSend(coding, answer.body);
  return encodedAnswer(answer, coding, body, answer.validators && strongEtag(body));
}

/**
 * `identity` with stored codings attached: one answer per coding of `bodies`, best first, each with
 * its strong ETag (a digest of its own bytes: a client holding one coding never gets a 304 for
 * another). Nothing is compressed per response any more.
 */
export function withEncodings(identity: Answer, bodies: readonly [Coding, Buffer][]): Answer {
  return {
    ...identity,
    compressOnSend: false,
    encodings: {
      codings: bodies.map(([coding]) => coding),
      answers: bodies.map(([coding, body]) =>
        encodedAnswer(identity, coding, body, identity.validators && strongEtag(body)),
      ),
    },
  };
}

/**
 * An answer the render cache is about to keep, compressed once in every stored coding (off the
 * event loop) when it would otherwise be compressed per response; a nonced one in gzip around its
 * slots (gzip-slots.ts), as its body changes with every nonce.
 */
export async function encodedForStore(identity: Answer): Promise<Answer> {
  if (identity.compressOnSend !== true) {
    return identity;
  }
  const slots = identity.perResponse;
  if (slots !== undefined) {
    return withGzipAroundSlots(identity, await deflatePieces(slots, STORED_GZIP_LEVEL));
  }
  const bodies = await compressForStore(identity.body);
  return bodies === undefined ? identity : withEncodings(identity, bodies);
}

/**
 * A nonced `identity` with its gzip coding made of `deflated`, its pieces (gzip-slots.ts): each
 * response then computes a CRC, not a compression. Clients that take no gzip get it as it is.
 */
export function withGzipAroundSlots(identity: Answer, deflated: readonly Buffer[]): Answer {
  const slots = identity.perResponse!;
  if (slots.valueLength === undefined) {
    return identity;
  }
  const etag = identity.validators && codedTag(identity.validators.etag, 'gzip');
  const { perResponse, length } = gzipAroundSlots(slots, deflated, slots.valueLength);
  const headers = recoded(identity.headers, 'gzip', etag);
  headers.push('Content-Length', String(length));
  const coded: Answer = {
    status: identity.status,
    headers,
    notModifiedHeaders: retagged(identity.notModifiedHeaders, etag),
    body: EMPTY,
    validators: etag === undefined ? undefined : { ...identity.validators, etag },
    perResponse,
  };
  return {
    ...identity,
    compressOnSend: false,
    encodings: { codings: ['gzip'], answers: [coded] },
  };
}

/** A weak tag of a template for one of its codings: the coding named inside the quotes. */
function codedTag(etag: string, coding: Coding): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}

/**
 * `identity` in `coding`: its headers with Content-Encoding after Content-Type, the body's own
 * Content-Length, and `etag` (undefined: no validator, as for the identity) in place of its ETag.
 */
export function encodedAnswer(
  identity: Answer,
  coding: Coding,
  body: Buffer,
  etag: string | undefined,
): Answer {
  const headers = recoded(identity.headers, coding, etag);
  headers.push('Content-Length', String(body.length));
  return {
    status: identity.status,
    headers,
    notModifiedHeaders: retagged(identity.notModifiedHeaders, etag),
    body,
    validators: etag === undefined ? undefined : { ...identity.validators, etag },
  };
}

/**
 * A nonced page in `coding`: every response fills its slots, then compresses the whole page. Its
 * validator stays weak, and names the coding: the template's tag with the coding appended.
 */
function compressedPerResponse(identity: Answer, slots: PerResponseBody, coding: Coding): Answer {
  const etag = identity.validators && codedTag(identity.validators.etag, coding);
  const perResponse: PerResponseBody = {
    // The writer sends segments[0], the value, segments[1]: the value is the compressed page.
    segments: [EMPTY, EMPTY],
    next() {
      const { value, headers } = slots.next();
      const body = compressOnSend(coding, filled(slots.segments, value));
      return { value: body, headers: [...headers, 'Content-Length', String(body.length)] };
    },
  };
  return {
    status: identity.status,
    // Its length goes with each response's body.
    headers: recoded(identity.headers, coding, etag),
    notModifiedHeaders: retagged(identity.notModifiedHeaders, etag),
    body: EMPTY,
    validators: etag === undefined ? undefined : { ...identity.validators, etag },
    perResponse,
  };
}

/** The page of a per-response body: its segments with `value` in every slot between them. */
function filled(segments: readonly Buffer[], value: Buffer): Buffer {
  const pieces: Buffer[] = [];
  for (let i = 0; i < segments.length; i++) {
    pieces.push(segments[i]);
    if (i < segments.length - 1) {
      pieces.push(value);
    }
  }
  return Buffer.concat(pieces);
}

/** Headers of the identity answer for the coded one, its Content-Length left out. */
function recoded(headers: readonly string[], coding: Coding, etag: string | undefined): string[] {
  const out: string[] = [];
  let typed = false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i].toLowerCase();
    if (name === 'content-length' || (name === 'etag' && etag === undefined)) {
      continue;
    }
    out.push(headers[i], name === 'etag' ? etag! : headers[i + 1]);
    if (name === 'content-type') {
      out.push('Content-Encoding', coding);
      typed = true;
    }
  }
  return typed ? out : ['Content-Encoding', coding, ...out];
}

function retagged(headers: readonly string[], etag: string | undefined): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i].toLowerCase() === 'etag') {
      if (etag !== undefined) {
        out.push(headers[i], etag);
      }
    } else {
      out.push(headers[i], headers[i + 1]);
    }
  }
  return out;
}
