// A cached page as the shared tier stores it: its metadata as JSON and its body as bytes, with the
// body's stored codings (http/encodings.ts) as bytes beside it, in fields of one Redis hash: a page
// is compressed once for every replica. With a Content-Security-Policy the body holds the writer's
// nonce placeholders; only their offsets travel, and the reader puts its own placeholder there.
import { nonceSlotsAt, NonceSlots } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import type { Answer } from '../http/answer.ts';
import { type Coding, STORED_CODINGS } from '../http/content-coding.ts';
import type { EntryCodec } from '../cache/shared-tier.ts';
import type { SharedCachePolicy } from '../cache/entry.ts';
import { encodedAnswer, encodedForStore } from '../http/encodings.ts';
import type { CachedPage, PageParts, PartSlot } from './page-entry.ts';

/** Bumped whenever the layout changes: an entry of another version reads as a miss. */
const VERSION = 4;

/** The hash field of a coding's body. */
export const CODING_FIELDS: readonly string[] = STORED_CODINGS.map((coding) => `b.${coding}`);

/** A stored coding of the page: its name and validator (its headers follow from the body's). */
interface EntryCoding {
  coding: Coding;
  etag: string | null;
}

interface EntryMeta {
  v: number;
  status: number;
  headers: string[];
  notModifiedHeaders: string[];
  etag: string | null;
  offsets: number[] | null;
  policy: SharedCachePolicy;
  groups: string[];
  storedAt: number;
  codings: EntryCoding[];
  /** Compressed as it goes out (or a nonced page, around its slots): nothing but the body is stored. */
  onSend: boolean;
  /** Its personal parts (pages/personal/): where each placeholder lies in the body. */
  parts: PageParts | null;
}

/**
 * A page's codings stored as bytes: not those made around a nonced page's slots, which the reader
 * makes again from the body (http/gzip-slots.ts).
 */
function storedCodings(answer: Answer): { coding: Coding; answer: Answer }[] {
  const { encodings } = answer;
  return (encodings?.codings ?? [])
    .map((coding, i) => ({ coding, answer: encodings!.answers[i] }))
    .filter((coded) => coded.answer.perResponse === undefined);
}

/**
 * How the shared tier stores pages (cache/shared-tier.ts): `m` the metadata, `b` the body, and a
 * field per stored coding. A nonced page's gzip around its slots is made where it is read, from
 * that process's placeholders.
 */
export function pageCodec(csp: ContentSecurityPolicy | undefined): EntryCodec<CachedPage> {
  return {
    fields: ['m', 'b', ...CODING_FIELDS],
    write(page) {
      const coded = codingBodies(page.answer);
      const bytes = Object.values(coded).reduce(
        (sum, b) => sum + b.length,
        page.answer.body.length,
      );
      return { fields: { m: entryMeta(page), b: page.answer.body, ...coded }, bytes };
    },
    async read([meta, body, ...codings], revalidated) {
      if (meta === null || body === null) {
        return undefined;
      }
      const coded = new Map(CODING_FIELDS.map((field, i) => [field, codings[i]]));
      const page = pageOfEntry(meta.toString(), body, revalidated, csp, coded);
      if (page?.answer.perResponse !== undefined) {
        page.answer = await encodedForStore(page.answer);
      }
      return page;
    },
  };
}

/** The coded bodies of a page, by hash field (CODING_FIELDS). */
export function codingBodies(answer: Answer): Record<string, Buffer> {
  return Object.fromEntries(
    storedCodings(answer).map(({ coding, answer: coded }) => [`b.${coding}`, coded.body]),
  );
}

export function entryMeta(page: CachedPage): string {
  const { answer } = page;
  const meta: EntryMeta = {
    v: VERSION,
    status: answer.status,
    headers: [...answer.headers],
    notModifiedHeaders: [...answer.notModifiedHeaders],
    etag: answer.validators?.etag ?? null,
    offsets: answer.perResponse instanceof NonceSlots ? [...answer.perResponse.offsets] : null,
    policy: page.policy,
    groups: [...page.groups],
    storedAt: page.storedAt,
    codings: storedCodings(answer).map(({ coding, answer: coded }) => ({
      coding,
      etag: coded.validators?.etag ?? null,
    })),
    // Compressed as it goes out, or around its slots: its codings are made again where it is read.
    onSend:
      answer.compressOnSend === true ||
      (answer.perResponse !== undefined && answer.encodings !== undefined),
    parts: page.parts ?? null,
  };
  return JSON.stringify(meta);
}

/**
 * The page of a stored entry, or undefined when it cannot be one here: another layout version,
 * a field of the wrong shape, nonce offsets outside the body, a coding whose bytes are missing, or
 * a nonced page in a process without a policy (or the other way round).
 */
export function pageOfEntry(
  metaJson: string,
  body: Buffer,
  revalidated: boolean,
  csp: ContentSecurityPolicy | undefined,
  coded: ReadonlyMap<string, Buffer | null> = new Map(),
): CachedPage | undefined {
  let meta: EntryMeta;
  try {
    meta = JSON.parse(metaJson) as EntryMeta;
  } catch {
    return undefined;
  }
  if (!isEntryMeta(meta, coded, csp, body)) {
    return undefined;
  }
  const perResponse =
    meta.offsets === null || csp === undefined ? undefined : nonceSlotsAt(body, meta.offsets, csp);
  if (meta.offsets !== null && perResponse === undefined) {
    return undefined;
  }
  const identity: Answer = {
    status: meta.status,
    headers: meta.headers,
    notModifiedHeaders: meta.notModifiedHeaders,
    body,
    validators: meta.etag === null ? undefined : { etag: meta.etag },
    perResponse,
    compressOnSend: meta.onSend,
  };
  return {
    answer: meta.codings.length === 0 ? identity : withCodings(identity, meta.codings, coded),
    policy: meta.policy,
    groups: meta.groups,
    storedAt: meta.storedAt,
    revalidated,
    refreshFailed: false,
    parts: meta.parts ?? undefined,
  };
}

/** Whether parsed metadata has this layout, and fits the coded bodies read and this process's policy. */
function isEntryMeta(
  meta: EntryMeta | null,
  coded: ReadonlyMap<string, Buffer | null>,
  csp: ContentSecurityPolicy | undefined,
  body: Buffer,
): meta is EntryMeta {
  return (
    meta?.v === VERSION &&
    Number.isInteger(meta.status) &&
    isHeaderList(meta.headers) &&
    isHeaderList(meta.notModifiedHeaders) &&
    (meta.etag === null || typeof meta.etag === 'string') &&
    isPolicy(meta.policy) &&
    Array.isArray(meta.groups) &&
    meta.groups.every((group) => typeof group === 'string') &&
    Number.isFinite(meta.storedAt) &&
    areCodings(meta.codings, coded) &&
    typeof meta.onSend === 'boolean' &&
    (meta.offsets === null) === (csp === undefined) &&
    (meta.parts === null || areParts(meta.parts, body.length))
  );
}

/** Parts whose slots lie in the body, in order, apart: a page stored by a process of this build. */
function areParts(parts: PageParts, bodyLength: number): boolean {
  if (!Array.isArray(parts.slots) || !Array.isArray(parts.cookies)) {
    return false;
  }
  let previousEnd = 0;
  for (const slot of parts.slots as unknown[]) {
    const { name, inputs, start, end } = (slot ?? {}) as Partial<PartSlot>;
    if (
      typeof name !== 'string' ||
      inputs === null ||
      typeof inputs !== 'object' ||
      !Number.isInteger(start) ||
      !Number.isInteger(end) ||
      start! < previousEnd ||
      end! < start! ||
      end! > bodyLength
    ) {
      return false;
    }
    previousEnd = end!;
  }
  return parts.cookies.every((cookie) => typeof cookie === 'string');
}

/** The identity answer with its stored codings, their validators as stored (never hashed again). */
function withCodings(
  identity: Answer,
  codings: readonly EntryCoding[],
  coded: ReadonlyMap<string, Buffer | null>,
): Answer {
  return {
    ...identity,
    encodings: {
      codings: codings.map(({ coding }) => coding),
      answers: codings.map(({ coding, etag }) =>
        encodedAnswer(identity, coding, coded.get(`b.${coding}`)!, etag ?? undefined),
      ),
    },
  };
}

/** Every coding named is one this origin stores, once, with its bytes present. */
function areCodings(value: unknown, coded: ReadonlyMap<string, Buffer | null>): boolean {
  if (!Array.isArray(value)) {
    return false;
  }
  const seen = new Set<unknown>();
  return value.every((entry: Partial<EntryCoding> | null) => {
    const ok =
      typeof entry === 'object' &&
      entry !== null &&
      STORED_CODINGS.includes(entry.coding!) &&
      !seen.has(entry.coding) &&
      (entry.etag === null || typeof entry.etag === 'string') &&
      coded.get(`b.${entry.coding}`) instanceof Buffer;
    seen.add(entry?.coding);
    return ok;
  });
}

function isHeaderList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length % 2 === 0 &&
    value.every((item) => typeof item === 'string')
  );
}

function isPolicy(value: unknown): value is SharedCachePolicy {
  const policy = value as SharedCachePolicy | undefined;
  return (
    typeof policy === 'object' &&
    policy !== null &&
    [policy.freshMs, policy.staleWhileRevalidateMs, policy.staleIfErrorMs].every(
      (ms) => Number.isFinite(ms) && ms >= 0,
    )
  );
}
