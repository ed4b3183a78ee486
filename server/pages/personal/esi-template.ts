// A page with parts as an Edge Side Includes template, for a surrogate that said it assembles them
// (`Surrogate-Capability: …="ESI/1.0"`, W3C's Edge Architecture note; the shipped Varnish): each
// part's placeholder is replaced by an include of the part's own URL, which carries the build and
// the page, never the visitor (the surrogate forwards the visitor's cookies with it). The surrogate
// keeps the template once for everyone and fetches each visitor's parts.
//
// Varnish's ESI parser is no HTML parser: it acts on `<esi:` and `<!--esi` wherever they stand, in
// an attribute, a script, a comment. Anything of the kind the page itself holds (an API's product
// name printed in an attribute, JSON-LD, the transfer state) is neutralized here, in the way that
// keeps what the browser reads: `&lt;` where HTML decodes character references, `\u003c` in JSON,
// `\x3c` in JavaScript, `\3c ` in CSS, `<!-- esi` for a comment.
import { parse } from 'parse5';
import type { DefaultTreeAdapterMap } from 'parse5';
import { answer, type Answer } from '../../http/answer.ts';
import { strongEtag } from '../../http/entity-tag.ts';
import type { PageParts } from '../../render-cache/page-entry.ts';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

/** What a surrogate that assembles ESI says it can do (RFC-less, W3C note: `name="ESI/1.0"`). */
const ESI_CAPABLE = /(?:^|[\s,;])[A-Za-z0-9._-]+="[^"]*\bESI\/1\.0\b[^"]*"/;

/** Whether the request comes from a surrogate that assembles Edge Side Includes. */
export function surrogateAssembles(capability: string | string[] | undefined): boolean {
  const value = Array.isArray(capability) ? capability.join(', ') : capability;
  return value !== undefined && ESI_CAPABLE.test(value);
}

/** Anything Varnish's ESI parser would act on (it matches case-sensitively; this does not). */
const FOREIGN_ESI = /<(?:\/?esi:|!--esi)/gi;
const HAS_FOREIGN_ESI = /<(?:\/?esi:|!--esi)/i;

/** The part URL of the `index`-th part of the page at `target` (its path and query), in build `build`. */
export function partUrl(build: string, index: number, target: string): string {
  return `/_origin/part/${build}/${index}${target}`;
}

/**
 * The template of a page with parts: its headers (a shared page's, for the surrogate to keep), each
 * part an include of its URL, and what the page held that an ESI parser would act on neutralized.
 * `target` is the page's path and query as its key has them.
 */
export function esiTemplate(page: Answer, parts: PageParts, build: string, target: string): Answer {
  const html = page.body.toString('utf8');
  const slots = charSlots(page.body, parts);
  const escapes = HAS_FOREIGN_ESI.test(html) ? foreignEsi(html) : [];
  let out = '';
  let at = 0;
  let next = 0;
  const copy = (to: number) => {
    for (; next < escapes.length && escapes[next].at < to; next++) {
      const { at: escapeAt, text } = escapes[next];
      if (escapeAt >= at) {
        out += html.slice(at, escapeAt) + text;
        at = escapeAt + 1;
      }
    }
    out += html.slice(at, to);
    at = to;
  };
  slots.forEach(({ start, end }, index) => {
    copy(start);
    // Inside an attribute value of the include: `&` and `"` must not end it; the path and query
    // are a URL's already (request/page-target.ts spelled them once), `"` percent-encoded here.
    const src = partUrl(build, index, target).replaceAll('"', '%22').replaceAll('<', '%3C');
    out += `<esi:include src="${src}"/>`;
    at = end;
  });
  copy(html.length);
  const body = Buffer.from(out);
  const headers: string[] = [];
  for (let i = 0; i < page.headers.length; i += 2) {
    const name = page.headers[i].toLowerCase();
    if (name !== 'etag' && name !== 'content-length') {
      headers.push(page.headers[i], page.headers[i + 1]);
    }
  }
  const etag = strongEtag(body);
  headers.push('ETag', etag, 'Surrogate-Control', 'content="ESI/1.0"');
  return answer(page.status, headers, body, { validators: { etag } });
}

/** The parts' byte offsets as offsets in the page's string (UTF-16 units). */
function charSlots(body: Buffer, parts: PageParts): { start: number; end: number }[] {
  return parts.slots.map(({ start, end }) => ({
    start: body.toString('utf8', 0, start).length,
    end: body.toString('utf8', 0, end).length,
  }));
}

/**
 * Where the page holds something an ESI parser would act on, and what its one character at `at`
 * becomes there, in order.
 */
function foreignEsi(html: string): { at: number; text: string }[] {
  const ranges: { start: number; end: number; kind: Context }[] = [];
  const document = parse(html, { sourceCodeLocationInfo: true });
  walk(document, (node, parent) => {
    const where = node.sourceCodeLocation;
    if (where === undefined || where === null) {
      return;
    }
    if (node.nodeName === '#text') {
      ranges.push({ start: where.startOffset, end: where.endOffset, kind: textContext(parent) });
    } else if (node.nodeName === '#comment') {
      ranges.push({ start: where.startOffset, end: where.endOffset, kind: 'comment' });
    } else if ('attrs' in where) {
      for (const location of Object.values(where.attrs ?? {})) {
        ranges.push({ start: location.startOffset, end: location.endOffset, kind: 'html' });
      }
    }
  });
  const kindAt = (at: number): Context =>
    ranges.find(({ start, end }) => start <= at && at < end)?.kind ?? 'html';
  return [...html.matchAll(FOREIGN_ESI)].map((match) => {
    const kind = kindAt(match.index);
    // In data (an attribute, a title's text, a JSON string) `<!--esi` is escaped as `<esi:` is,
    // which reads as the same string. Elsewhere it may be a comment (the page's, or `<!--` in a
    // script or style) and stays one: Varnish acts on `<!--esi` alone, not on `<!-- esi`.
    return match[0].startsWith('<!--') && kind !== 'html' && kind !== 'json'
      ? { at: match.index + 4, text: ` ${html[match.index + 4]}` }
      : { at: match.index, text: ESCAPED_LESS_THAN[kind] };
  });
}

type Context = 'html' | 'comment' | 'json' | 'javascript' | 'css';

const ESCAPED_LESS_THAN: Record<Context, string> = {
  html: '&lt;',
  comment: '&lt;',
  json: '\\u003c',
  javascript: '\\x3c',
  css: '\\3c ',
};

/** Script types whose content is JSON (a data block: JSON-LD, the transfer state, an import map). */
const JSON_TYPES = /^(?:application\/(?:[\w.+-]*\+)?json|importmap|speculationrules)$/i;

/** How the text of an element's content is read: markup's, or a script's or style's raw text. */
function textContext(parent: Node | undefined): Context {
  if (parent === undefined || !('tagName' in parent)) {
    return 'html';
  }
  const element: Element = parent;
  if (element.tagName === 'style') {
    return 'css';
  }
  if (element.tagName === 'script') {
    const type = element.attrs.find(({ name }) => name === 'type')?.value.trim() ?? '';
    return JSON_TYPES.test(type) ? 'json' : 'javascript';
  }
  return 'html';
}

function walk(
  node: Node,
  visit: (node: Node, parent: Node | undefined) => void,
  parent?: Node,
): void {
  visit(node, parent);
  const children = 'childNodes' in node ? node.childNodes : [];
  for (const child of children) {
    walk(child, visit, node);
  }
  if (node.nodeName === 'template' && 'content' in node) {
    walk(node.content, visit, node);
  }
}
