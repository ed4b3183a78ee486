import type { PerResponseBody } from '../http/answer.ts';
import { strongEtag } from '../http/entity-tag.ts';
import { type ContentSecurityPolicy, freshNonce, NONCE_LENGTH } from './policy.ts';

/**
 * An HTML page stored with its nonce placeholders, and where they are: each response gets a fresh
 * nonce in every slot and the policy that names it (http/answer.ts writes it).
 */
export class NonceSlots implements PerResponseBody {
  readonly policy: ContentSecurityPolicy;
  /** Byte offsets of every placeholder in the stored body. */
  readonly offsets: readonly number[];
  readonly segments: readonly Buffer[];
  readonly valueLength = NONCE_LENGTH;

  constructor(body: Buffer, offsets: readonly number[], policy: ContentSecurityPolicy) {
    const segments: Buffer[] = [];
    let previous = 0;
    for (const offset of offsets) {
      segments.push(body.subarray(previous, offset));
      previous = offset + NONCE_LENGTH;
    }
    segments.push(body.subarray(previous));
    this.policy = policy;
    this.offsets = offsets;
    this.segments = segments;
  }

  next(): { value: Buffer; headers: readonly string[] } {
    const nonce = freshNonce();
    return { value: Buffer.from(nonce, 'latin1'), headers: this.policy.headers(nonce) };
  }
}

/**
 * A page with a nonce placeholder on every `<script>`, `<style>` and `<link>` that the build, the
 * origin or Angular wrote (everything outside the app's root element), and `ngCspNonce` on the
 * root element so that Angular's client gives the styles it adds later the same nonce. Inside the
 * root element, which holds what the app rendered, nothing is added: only tags Angular already gave
 * the placeholder (through CSP_NONCE) keep it, so markup an attacker got into the page (through a
 * bypassed sanitizer, say) stays without a nonce and is blocked.
 */
export function nonceTemplate(
  html: string,
  policy: ContentSecurityPolicy,
): { body: Buffer; slots: NonceSlots } {
  const marked = markTrustedTags(html, ` nonce="${policy.placeholder}"`, policy.placeholder);
  const body = Buffer.from(marked);
  const offsets: number[] = [];
  for (
    let at = body.indexOf(policy.placeholder);
    at !== -1;
    at = body.indexOf(policy.placeholder, at + NONCE_LENGTH)
  ) {
    offsets.push(at);
  }
  return { body, slots: new NonceSlots(body, offsets, policy) };
}

/**
 * The slots of a page stored by another process (the shared tier): its placeholders are at
 * `offsets`; this process's own placeholder is written there. Undefined if the offsets do not fit
 * the body (in order, apart, inside it).
 */
export function nonceSlotsAt(
  body: Buffer,
  offsets: readonly number[],
  policy: ContentSecurityPolicy,
): NonceSlots | undefined {
  let previousEnd = 0;
  for (const offset of offsets) {
    if (!Number.isInteger(offset) || offset < previousEnd || offset + NONCE_LENGTH > body.length) {
      return undefined;
    }
    body.write(policy.placeholder, offset, NONCE_LENGTH, 'latin1');
    previousEnd = offset + NONCE_LENGTH;
  }
  return new NonceSlots(body, [...offsets], policy);
}

/** A comment, or an open tag (its attribute values may hold `>`). */
const TOKEN = /<!--[\s\S]*?-->|<([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const SCRIPT_END = /<\/script/gi;
const STYLE_END = /<\/style/gi;
const NEEDS_NONCE = new Set(['script', 'style', 'link']);
const HAS_NONCE = /\snonce\s*=/i;
const HAS_NG_CSP_NONCE = /\sngcspnonce\s*=/i;

function markTrustedTags(html: string, nonceAttribute: string, placeholder: string): string {
  const out: string[] = [];
  let copied = 0;
  let inBody = false;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(html); match !== null; match = TOKEN.exec(html)) {
    const name = match[1]?.toLowerCase();
    if (name === undefined) {
      continue;
    }
    // Added as the last attribute: the tag otherwise reads as the build wrote it.
    const tagEnd = TOKEN.lastIndex - (match[2].endsWith('/') ? 2 : 1);
    if (NEEDS_NONCE.has(name) && !HAS_NONCE.test(match[2])) {
      out.push(html.slice(copied, tagEnd), nonceAttribute);
      copied = tagEnd;
    }
    if (name === 'script' || name === 'style') {
      // Their text is not markup: go on after their end tag.
      const endTag = name === 'script' ? SCRIPT_END : STYLE_END;
      endTag.lastIndex = TOKEN.lastIndex;
      TOKEN.lastIndex = endTag.exec(html)?.index ?? html.length;
    } else if (name === 'body') {
      inBody = true;
    } else if (inBody && name.includes('-')) {
      // The root element: the first custom element of the body. Its content is the app's render,
      // up to its last end tag (markup inside cannot come after it).
      if (!HAS_NG_CSP_NONCE.test(match[2])) {
        out.push(html.slice(copied, tagEnd), ` ngCspNonce="${placeholder}"`);
        copied = tagEnd;
      }
      const end = html.lastIndexOf(`</${match[1]}>`);
      if (end > TOKEN.lastIndex) {
        TOKEN.lastIndex = end;
      }
      inBody = false;
    }
  }
  out.push(html.slice(copied));
  return out.join('');
}

/**
 * A weak validator of the stored page: the same for every response (whatever their nonces) and in
 * every process (whatever its placeholder), because the placeholders are hashed as blanks.
 */
export function templateEtag(body: Buffer, slots: NonceSlots): string {
  const blank = Buffer.from(body);
  for (const offset of slots.offsets) {
    blank.fill(0x2d, offset, offset + NONCE_LENGTH);
  }
  return `W/${strongEtag(blank)}`;
}

/**
 * An HTML answer as stored under a policy, whose body takes a fresh nonce per response: the page
 * with its placeholders, where they are, its validator and the headers that go with it. Every
 * nonced HTML answer (prerendered files, renders, the client-side shell) is made here.
 */
export interface NoncedAnswer {
  /** The page with a nonce placeholder on every trusted tag (see nonceTemplate). */
  body: Buffer;
  slots: NonceSlots;
  /** A weak ETag of the template (see templateEtag); undefined for an answer without validators. */
  etag: string | undefined;
  /**
   * Flat (name, value, …): `Cache-Control` (the answer's own, made private), `CDN-Cache-Control:
   * no-store`, then `ETag` if there is one. Also what a 304 repeats of them; the policy itself is
   * added per response, never to a 304 (docs/content-security-policy.md).
   */
  headers: string[];
}

/**
 * The nonced answer for `html`, from the Cache-Control it would have had without a policy.
 * `validated` false leaves it without an ETag (like @koa/etag, no hash of an error page).
 */
export function noncedAnswer(
  html: string,
  policy: ContentSecurityPolicy,
  cacheControl: string,
  validated = true,
): NoncedAnswer {
  const { body, slots } = nonceTemplate(html, policy);
  const etag = validated ? templateEtag(body, slots) : undefined;
  const headers = [
    'Cache-Control',
    privateCacheControl(cacheControl),
    'CDN-Cache-Control',
    'no-store',
  ];
  if (etag !== undefined) {
    headers.push('ETag', etag);
  }
  return { body, slots, etag, headers };
}

/**
 * Cache-Control for a page whose body changes per response: no shared cache may store it (a CDN
 * would serve one nonce to everyone); the browser keeps its own copy and revalidates it. An answer
 * that says no-store keeps saying so. CDN-Cache-Control (RFC 9213) says the same to CDNs that
 * follow it in place of Cache-Control.
 */
function privateCacheControl(cacheControl: string): string {
  return /\bno-store\b/i.test(cacheControl) ? cacheControl : 'private, no-cache';
}
