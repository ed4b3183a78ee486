// A cached page as the shared tier stores it: its metadata as JSON and its body as bytes, in two
// fields of one Redis hash. With a Content-Security-Policy the body holds the writer's nonce
// placeholders; only their offsets travel, and the reader puts its own placeholder there.
import { nonceSlotsAt, NonceSlots } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import type { SharedCachePolicy } from './policy.ts';
import type { CachedPage } from './store.ts';

/** Bumped whenever the layout changes: an entry of another version reads as a miss. */
const VERSION = 2;

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
  };
  return JSON.stringify(meta);
}

/**
 * The page of a stored entry, or undefined when it cannot be one here: another layout version,
 * a field of the wrong shape, nonce offsets outside the body, or a nonced page in a process without
 * a policy (or the other way round).
 */
export function pageOfEntry(
  metaJson: string,
  body: Buffer,
  revalidated: boolean,
  csp: ContentSecurityPolicy | undefined,
): CachedPage | undefined {
  let meta: EntryMeta;
  try {
    meta = JSON.parse(metaJson) as EntryMeta;
  } catch {
    return undefined;
  }
  if (
    meta?.v !== VERSION ||
    !Number.isInteger(meta.status) ||
    !isHeaderList(meta.headers) ||
    !isHeaderList(meta.notModifiedHeaders) ||
    (meta.etag !== null && typeof meta.etag !== 'string') ||
    !isPolicy(meta.policy) ||
    !Array.isArray(meta.groups) ||
    !meta.groups.every((group) => typeof group === 'string') ||
    !Number.isFinite(meta.storedAt) ||
    (meta.offsets === null) !== (csp === undefined)
  ) {
    return undefined;
  }
  const perResponse =
    meta.offsets === null || csp === undefined ? undefined : nonceSlotsAt(body, meta.offsets, csp);
  if (meta.offsets !== null && perResponse === undefined) {
    return undefined;
  }
  return {
    answer: {
      status: meta.status,
      headers: meta.headers,
      notModifiedHeaders: meta.notModifiedHeaders,
      body,
      validators: meta.etag === null ? undefined : { etag: meta.etag },
      perResponse,
    },
    policy: meta.policy,
    groups: meta.groups,
    storedAt: meta.storedAt,
    revalidated,
    refreshFailed: false,
  };
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
