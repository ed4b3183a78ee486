// A page as the render cache keeps it: the answer to send again without rendering it (its
// validators included; Age and Cache-Status are added per response), and what the cache core
// keeps of every entry (cache/store.ts): its groups, its policy, when it was stored.
import type { StoredEntry } from '../cache/entry.ts';
import type { Answer } from '../http/answer.ts';

export interface CachedPage extends StoredEntry {
  /** Replaced once by the same answer with its stored codings (EntryStore#replace). */
  answer: Answer;
  /** Its personal parts, for the visitors they are filled for (pages/personal/); none for most pages. */
  parts?: PageParts;
}

/** A personal part of a page: which part, its inputs, where its placeholder lies in the page's body. */
export interface PartSlot {
  name: string;
  /** As the page's render gave them (JSON). */
  inputs: Record<string, unknown>;
  /** Byte offsets of the placeholder in the page's identity body: [start, end). */
  start: number;
  end: number;
}

/** The personal parts of one page, in document order, and the cookies that make a request personal for it. */
export interface PageParts {
  slots: readonly PartSlot[];
  /** Every cookie its parts declare: a request carrying none of them gets the shared page. */
  cookies: readonly string[];
}

/** Bookkeeping per entry beyond the body: key, headers, and the objects around them. */
const ENTRY_OVERHEAD_BYTES = 512;

/** What a page counts against the cache's bytes: every coding of it (http/encodings.ts) included. */
export function pageBytes(page: CachedPage, key: string): number {
  const answers = [page.answer, ...(page.answer.encodings?.answers ?? [])];
  return answers.reduce(
    (sum, { body, headers, notModifiedHeaders }) =>
      sum + body.length + headerBytes(headers) + headerBytes(notModifiedHeaders),
    key.length + ENTRY_OVERHEAD_BYTES + partsBytes(page.parts),
  );
}

/** A page's parts: their inputs as JSON, and bookkeeping per slot. */
function partsBytes(parts: PageParts | undefined): number {
  return (parts?.slots ?? []).reduce(
    (sum, slot) => sum + 64 + slot.name.length + JSON.stringify(slot.inputs).length,
    0,
  );
}

function headerBytes(list: readonly string[]): number {
  return list.reduce((sum, value) => sum + value.length, 0);
}

/** The path of a page's key (`http://host:port/path?query`, then its inputs a line each). */
export function pathOf(key: string): string {
  const start = key.indexOf('/', key.indexOf('//') + 2);
  const end = key.search(/[?\n]/);
  return key.slice(start, end === -1 ? undefined : end);
}
