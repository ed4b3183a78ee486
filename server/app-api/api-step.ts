// The app's own API (the `api` its server bundle may export, e.g. the demo's src/api/): answered on
// `/api/…` before the Host guard, because renders call it by an internal address (127.0.0.1, a
// service name) that NG_ALLOWED_HOSTS need not list. Like the revalidation endpoint it never
// renders, and it does not read Host: the API sees its path and query under a fixed origin. At its
// boundary, Angular's own conversion makes the web Request (@angular/ssr/node), and the Response
// the API made is turned into the origin's Answer, which the one writer sends (http/answer.ts).
import { createWebRequestFromNodeRequest } from '@angular/ssr/node';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { nameRequest } from '../channels.ts';
import { OriginError, report } from '../errors.ts';
import { answer, type Answer, respond } from '../http/answer.ts';
import { API_ROUTE, isApiPath } from './api-path.ts';

export { API_PATH, API_ROUTE, isApiPath } from './api-path.ts';

/** A web-standard handler: the answer to a request, or null for one it does not answer. */
export type AppApi = (request: Request, origin?: ApiOrigin) => Promise<Response | null>;

/**
 * What the origin offers the app's API besides the request: revalidation (pages, data and
 * visitors' parts by path or group, in every process, replica and the CDN), e.g. after a visitor's
 * cart changed. Undefined where another server mounts the API.
 */
export interface ApiOrigin {
  revalidate(request: unknown): Promise<unknown>;
}

/** The origin the API sees its requests under: it answers before Host is checked, so not Host's. */
const API_ORIGIN = 'http://localhost';

/** Response headers that belong to one connection, never passed on (and refused over HTTP/2). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  // The writer counts the body it sends.
  'content-length',
]);

/** Statuses that carry no body (RFC 9110 §15.3.5, §15.4.5). */
const NO_BODY = new Set([204, 304]);

/**
 * The step: a request under `/api` goes to the app's API, whose answer goes out as it made it (its
 * own Cache-Control, ETag and 304s); a null answer goes on down the chain. An API that throws gets
 * a 500 as JSON, logged once, never a page.
 */
export function appApiStep(api: AppApi, log: Logger, origin?: ApiOrigin): Middleware {
  return async (ctx, next) => {
    if (!isApiPath(ctx.path)) {
      await next();
      return;
    }
    // Traces and logs name the API by its mount, never by its URL.
    nameRequest({ res: ctx.res, route: API_ROUTE });
    let response: Response | null;
    try {
      response = await api(requestOf(ctx), origin);
    } catch (error) {
      if (error instanceof OriginError) {
        throw error;
      }
      report(log, 'ORIGIN_API_FAILED', { err: error, url: ctx.url });
      answerJson(ctx, 500, 'the API failed to answer');
      return;
    }
    if (response === null) {
      await next();
      return;
    }
    let made: Answer;
    try {
      made = await answerOf(ctx, response);
    } catch (error) {
      report(log, 'ORIGIN_API_FAILED', { err: error, url: ctx.url }, ' while sending its body');
      answerJson(ctx, 500, 'the API failed to answer');
      return;
    }
    respond(ctx, made);
  };
}

/**
 * The request as the API sees it: Angular's own conversion (method, headers, the body as it comes,
 * aborted with its client), under the fixed origin with the path and query as asked. A Host that
 * is no host at all is refused here as the guard would (the conversion cannot make a URL of it).
 */
function requestOf(ctx: Context): Request {
  let converted: Request;
  try {
    converted = createWebRequestFromNodeRequest(ctx.req);
  } catch {
    throw new OriginError('ORIGIN_HOST_MALFORMED', 'host');
  }
  const target = `${ctx.path}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
  return new Request(new URL(target, API_ORIGIN), converted);
}

/**
 * The API's response as the origin's answer: its status, headers (each Set-Cookie apart, nothing
 * of one connection), and its body read whole (an API for renders answers small JSON); none for
 * HEAD, 204 or 304, but HEAD's length when the API answered HEAD as GET. Sent as the API made it:
 * never compressed or validated again (its ETag and 304s are its own).
 */
async function answerOf(ctx: Context, response: Response): Promise<Answer> {
  const headers: string[] = [];
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) && name !== 'set-cookie') {
      headers.push(name, value);
    }
  });
  for (const cookie of response.headers.getSetCookie()) {
    headers.push('set-cookie', cookie);
  }
  const body = Buffer.from(await response.arrayBuffer());
  if (NO_BODY.has(response.status)) {
    return answer(response.status, headers, Buffer.alloc(0), { compress: false });
  }
  // HEAD: the writer sends no body, but its length, which an API that answered HEAD as GET gave
  // in full (or said in its own Content-Length).
  const length = ctx.method === 'HEAD' ? headOnlyLength(response, body) : body.length;
  return answer(response.status, headers, body, { compress: false, length });
}

/** The Content-Length a HEAD answer says: the API's own, else what GET's body would be. */
function headOnlyLength(response: Response, body: Buffer): number | undefined {
  const declared = response.headers.get('content-length');
  return declared !== null && /^\d+$/.test(declared) ? Number(declared) : body.length;
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
