// What Koa's own steps leave on the context — a status, headers and a body: the health endpoints'
// and the revalidation endpoint's JSON, koa-static's file stream (with koa-etag's validator, or
// koa-conditional-get's 304), the router's 405, a missing file's 404 — as an Answer for the one
// writer (answer.ts), as Koa's respond() would have sent it.
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { answer, type Answer, respond } from './answer.ts';

/** Statuses that carry no body (Koa's `statuses.empty`). */
const EMPTY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);
/** What describes a body, left out of an answer that carries none. */
const BODY_HEADERS: ReadonlySet<string> = new Set(['content-type', 'transfer-encoding']);

const EMPTY = Buffer.alloc(0);

/**
 * The answer Koa's steps made: the headers they set (taken off the response, so that the writer's
 * list is the only one: two Set-Cookie stay two), the body as Koa would send it — a Buffer as is, a
 * string as UTF-8, an object as JSON, a stream as it comes with the length it declared, none for
 * 204, 205 and 304, the status text for a status alone. Never compressed or validated again here:
 * what Koa's steps send is theirs (koa-static sends the build's compressed copy, koa-etag and
 * koa-conditional-get gave its validator and its 304).
 */
export function koaAnswer(ctx: Context): Answer {
  const { status } = ctx;
  const empty = EMPTY_STATUSES.has(status);
  // koa-send declares a file's length before it streams it.
  const declared = Number(ctx.res.getHeader('content-length'));
  const declaredLength = Number.isInteger(declared) ? declared : undefined;
  const headers = takenHeaders(ctx, empty);
  const { body } = ctx;
  if (empty) {
    return answer(status, headers, EMPTY, { compress: false });
  }
  if (body instanceof Readable) {
    return answer(status, headers, EMPTY, {
      compress: false,
      stream: body,
      length: declaredLength,
    });
  }
  if (body === null || body === undefined) {
    // A status alone, as Koa answers it: its reason as text.
    return answer(
      status,
      [...headers, 'Content-Type', 'text/plain; charset=utf-8'],
      Buffer.from(ctx.message || String(status)),
      { compress: false },
    );
  }
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return answer(status, headers, bytes, { compress: false });
}

/** The headers Koa's steps set on the response, flat, and taken off it; none that describe a body when there is none. */
function takenHeaders(ctx: Context, empty: boolean): string[] {
  const { res } = ctx;
  const headers: string[] = [];
  // As the steps spelled them (`Cache-Control`), as Koa would have sent them; over HTTP/2 every
  // name is in lower case anyway (and the compatibility API keeps no other spelling).
  const names =
    (res as { getRawHeaderNames?: () => string[] }).getRawHeaderNames?.() ?? res.getHeaderNames();
  for (const name of names) {
    const value = res.getHeader(name);
    res.removeHeader(name);
    const lower = name.toLowerCase();
    if (lower === 'content-length' || value === undefined || (empty && BODY_HEADERS.has(lower))) {
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      headers.push(name, String(one));
    }
  }
  return headers;
}

/**
 * The writer's step, first in Koa's chain: what the steps below leave on the context goes out
 * through the one writer once they are done (unless a step answered through it already: `respond`).
 */
export const koaAnswers: Middleware = async (ctx, next) => {
  await next();
  if (ctx.respond !== false) {
    respond(ctx, koaAnswer(ctx));
  }
};
