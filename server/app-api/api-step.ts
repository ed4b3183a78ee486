// The app's own API (the `api` its server bundle may export, e.g. the demo's src/api/): answered on
// `/api/…` before the Host guard, because renders call it by an internal address (127.0.0.1, a
// service name) that NG_ALLOWED_HOSTS need not list. Like the revalidation endpoint it never
// renders, and it does not read Host: the API sees its path and query under a fixed origin.
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { report } from '../errors.ts';
import { nameRequest } from '../channels.ts';

/** A web-standard handler: the answer to a request, or null for one it does not answer. */
export type AppApi = (request: Request) => Promise<Response | null>;

/** The paths the app's API is asked for; the fast path leaves them to this step. */
export const API_PATH = '/api';

/** How traces and logs name a request the API answered. */
export const API_ROUTE = `${API_PATH}/*`;

/** The origin the API sees its requests under: it answers before Host is checked, so not Host's. */
const API_ORIGIN = 'http://localhost';

/** Response headers that belong to one connection, never passed on (and refused over HTTP/2). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** Statuses that carry no body (RFC 9110 §15.3.5, §15.4.5). */
const NO_BODY = new Set([204, 304]);

/**
 * Whether a path, or a request target as it came (a query after it), is the API's: `/api` or
 * under `/api/`. Allocates nothing: the fast path asks it of every request.
 */
export function isApiPath(target: string): boolean {
  if (!target.startsWith(API_PATH)) {
    return false;
  }
  const next = target.charAt(API_PATH.length);
  return next === '' || next === '/' || next === '?';
}

/**
 * The step: a request under `/api` goes to the app's API, whose answer goes out as it made it (its
 * own Cache-Control, ETag and 304s); a null answer goes on down the chain. An API that throws gets
 * a 500 as JSON, logged once, never a page.
 */
export function appApiStep(api: AppApi, log: Logger): Middleware {
  return async (ctx, next) => {
    if (!isApiPath(ctx.path)) {
      await next();
      return;
    }
    // Traces and logs name the API by its mount, never by its URL.
    nameRequest({ res: ctx.res, route: API_ROUTE });
    let response: Response | null;
    try {
      response = await api(requestOf(ctx));
    } catch (error) {
      report(log, 'ORIGIN_API_FAILED', { err: error, url: ctx.url });
      answerJson(ctx, 500, 'the API failed to answer');
      return;
    }
    if (response === null) {
      await next();
      return;
    }
    try {
      await answer(ctx, response);
    } catch (error) {
      report(log, 'ORIGIN_API_FAILED', { err: error, url: ctx.url }, ' while sending its body');
      answerJson(ctx, 500, 'the API failed to answer');
    }
  };
}

/** The request as the API sees it: method, path and query, headers, and the body as it comes. */
function requestOf(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    // HTTP/2's pseudo-headers are not headers; Node has validated the rest.
    if (value !== undefined && !name.startsWith(':')) {
      for (const one of Array.isArray(value) ? value : [value]) {
        headers.append(name, one);
      }
    }
  }
  const url = new URL(`${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`, API_ORIGIN);
  const bodyless = ctx.method === 'GET' || ctx.method === 'HEAD';
  return new Request(url, {
    method: ctx.method,
    headers,
    body: bodyless ? null : (Readable.toWeb(ctx.req) as ReadableStream<Uint8Array>),
    // @ts-expect-error -- Node's fetch needs it for a streamed body; the DOM's RequestInit lacks it.
    duplex: 'half',
  });
}

/**
 * The API's response, written by Koa: status, headers (Set-Cookie kept apart, nothing of one
 * connection), and the body read whole (an API for renders answers small JSON); none for HEAD,
 * 204 or 304.
 */
async function answer(ctx: Context, response: Response): Promise<void> {
  ctx.status = response.status;
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) && name !== 'set-cookie') {
      ctx.set(name, value);
    }
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) {
    ctx.set('set-cookie', cookies);
  }
  const body = Buffer.from(await response.arrayBuffer());
  if (ctx.method !== 'HEAD') {
    if (!NO_BODY.has(response.status)) {
      ctx.body = body;
    }
  } else if (body.length > 0 && !response.headers.has('content-length')) {
    // An API that answered HEAD as GET: the length GET sends, without the body.
    ctx.length = body.length;
  }
}

/** An answer of the step's own: nothing of what the API had set so far. */
function answerJson(ctx: Context, status: number, message: string): void {
  for (const name of ctx.res.getHeaderNames()) {
    ctx.remove(name);
  }
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: message };
}
