// Where a rendered page's personal parts are. PersonalPart (src/app/personal-part.ts) renders its
// placeholder between two marker elements that carry the render's token, a random value the origin
// gave this render alone: nothing the page prints (an API's data, a query string) can know it, so
// the markers are found by plain search, with no HTML parser, and cannot be forged. The markers are
// taken out of the page; what is kept is where each placeholder lies in the page's bytes.
import { randomBytes } from 'node:crypto';
import type { PageParts, PartSlot } from '../../render-cache/page-entry.ts';
import type { PartRule, PartRules } from './declarations.ts';

/** A render's token: 128 random bits, in characters that need no escaping in an attribute. */
export function partToken(): string {
  return randomBytes(16).toString('base64url');
}

/** What a page's markers said: the page without them, and its parts, or why it has none. */
export type FoundParts =
  | { body: Buffer; parts: PageParts | undefined; problem?: undefined }
  | { body: Buffer; parts: undefined; problem: string };

const START = (token: string) => `<template data-origin-part="${token}:`;
const START_CLOSE = '"></template>';
const END = (token: string, index: number) =>
  `<template data-origin-part-end="${token}:${index}"></template>`;

/**
 * The parts of a rendered page with `token`. A page whose markers do not make sense (a part inside
 * another, one before the body, an undeclared name, inputs that do not parse) has no parts: its
 * placeholders stay for everyone, and `problem` says why (ORIGIN_PART_MARKUP).
 */
export function findParts(html: string | Buffer, token: string, rules: PartRules): FoundParts {
  const page = typeof html === 'string' ? Buffer.from(html) : html;
  const start = Buffer.from(START(token));
  let at = page.indexOf(start);
  if (at === -1) {
    return { body: page, parts: undefined };
  }
  const pieces: Buffer[] = [];
  const slots: PartSlot[] = [];
  const cookies = new Set<string>();
  let copied = 0;
  let length = 0;
  const body = page.indexOf('<body');
  for (let index = 0; at !== -1; index++) {
    const fail = (problem: string): FoundParts => ({
      body: withoutMarkers(page, token),
      parts: undefined,
      problem,
    });
    const marker = readMarker(page, at + start.length, index, rules);
    if ('problem' in marker) {
      return fail(marker.problem);
    }
    const { close, name, inputs, rule } = marker;
    if (body === -1 || at < body) {
      return fail(`part "${name}" is outside the page's <body>`);
    }
    const placeholderStart = close + START_CLOSE.length;
    const end = Buffer.from(END(token, index));
    const endAt = page.indexOf(end, placeholderStart);
    if (endAt === -1) {
      return fail(`part "${name}" has no end`);
    }
    const next = page.indexOf(start, placeholderStart);
    if (next !== -1 && next < endAt) {
      return fail(`a part is inside part "${name}": parts cannot nest`);
    }
    pieces.push(page.subarray(copied, at));
    length += at - copied;
    const placeholder = page.subarray(placeholderStart, endAt);
    slots.push({ name, inputs, start: length, end: length + placeholder.length });
    pieces.push(placeholder);
    length += placeholder.length;
    copied = endAt + end.length;
    for (const cookie of rule.cookies) {
      cookies.add(cookie);
    }
    at = next;
  }
  pieces.push(page.subarray(copied));
  return { body: Buffer.concat(pieces), parts: { slots, cookies: [...cookies] } };
}

/** A start marker from `from` (past its token): its part, its inputs, where it closes. */
function readMarker(
  page: Buffer,
  from: number,
  index: number,
  rules: PartRules,
):
  | { close: number; name: string; inputs: Record<string, unknown>; rule: PartRule }
  | { problem: string } {
  const close = page.indexOf(START_CLOSE, from);
  if (close === -1) {
    return { problem: 'a part marker is not closed' };
  }
  const [given, name, inputsText] = page.toString('latin1', from, close).split(':');
  if (given !== String(index)) {
    return { problem: `part markers out of order (${given} where ${index} was due)` };
  }
  const rule = rules.get(name);
  if (rule === undefined) {
    return { problem: `the page has a part "${name}" the app does not declare` };
  }
  const inputs = parseInputs(inputsText);
  if (inputs === undefined) {
    return { problem: `part "${name}" has inputs that are not a JSON object` };
  }
  return { close, name, inputs, rule };
}

/** A page with every marker of `token` taken out, its placeholders kept. */
function withoutMarkers(page: Buffer, token: string): Buffer {
  const text = page.toString('latin1');
  const markers = new RegExp(
    `<template data-origin-part(?:-end)?="${token}:[^"]*"></template>`,
    'g',
  );
  return Buffer.from(text.replace(markers, ''), 'latin1');
}

/** A part's inputs: base64url of its JSON, an object. */
function parseInputs(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined || !/^[A-Za-z0-9_-]*$/.test(text)) {
    return undefined;
  }
  try {
    const inputs: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return inputs !== null && typeof inputs === 'object' && !Array.isArray(inputs)
      ? (inputs as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
