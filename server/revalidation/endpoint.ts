// POST /_origin/revalidate: revalidation for a CMS webhook or an operator. Mounted before the Host
// guard (a webhook calls the service by its internal name), so it authenticates instead: a bearer
// token compared in constant time, checked before anything of the body is read.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { closeAfterAnswer } from '../http/connection.ts';
import { parseRevalidationRequest } from './request.ts';
import type { RevalidationReport } from './revalidator.ts';
import type { RevalidationRequest } from './request.ts';
import { errorHappened } from '../errors.ts';

export const REVALIDATE_PATH = '/_origin/revalidate';
/** Paths under this prefix are the origin's own: never answered by the fast path or the app. */
export const ORIGIN_PATH_PREFIX = '/_origin/';
/** 1000 items of 2048 characters would not fit; real requests are far below. */
export const MAX_BODY_BYTES = 64 * 1024;

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;

/**
 * The endpoint; `revalidate` applies a valid request (Revalidator.revalidate). Every answer is JSON
 * (none for 405 and 401 but their headers) and `Cache-Control: no-store`.
 */
export function revalidateEndpoint(
  token: string,
  revalidate: (request: RevalidationRequest) => Promise<RevalidationReport>,
): Middleware {
  // Both sides hashed: equal lengths for timingSafeEqual, and nothing learned from how long the compare took.
  const expected = sha256(token);
  return async (ctx, next) => {
    if (ctx.path !== REVALIDATE_PATH) {
      await next();
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (!authorized(ctx.get('authorization'), expected)) {
      ctx.set('WWW-Authenticate', 'Bearer');
      return fail(
        ctx,
        401,
        'a valid "Authorization: Bearer <REVALIDATE_TOKEN>" header is required',
      );
    }
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      return fail(ctx, 405, 'only POST');
    }
    if (!JSON_TYPE.test(ctx.get('content-type'))) {
      return fail(ctx, 415, 'Content-Type must be application/json');
    }
    const declared = ctx.get('content-length');
    if (declared !== '' && Number(declared) > MAX_BODY_BYTES) {
      return tooLarge(ctx);
    }
    if (/100-continue/i.test(ctx.get('expect'))) {
      // The client waits for this before sending the body (the server's checkContinue handler
      // leaves it to the route): only now that the request may be read.
      ctx.res.writeContinue();
    }
    const body = await readBody(ctx.req, MAX_BODY_BYTES);
    if (body === GONE) {
      // The client went away mid-body: nobody to answer, nothing applied.
      ctx.respond = false;
      return;
    }
    if (body === undefined) {
      return tooLarge(ctx);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return fail(ctx, 400, 'the body is not JSON');
    }
    const parsed = parseRevalidationRequest(json);
    if ('error' in parsed) {
      return fail(ctx, 400, parsed.error);
    }
    ctx.status = 200;
    ctx.body = await revalidate(parsed.request);
  };
}

function authorized(header: string, expected: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header);
  // Hashed even when absent, so that a missing header costs what a wrong one does.
  return timingSafeEqual(sha256(match?.[1] ?? ''), expected) && match !== null;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function fail(ctx: Context, status: number, error: string): void {
  errorHappened(status === 401 ? 'ORIGIN_REVALIDATE_UNAUTHORIZED' : 'ORIGIN_REVALIDATE_INVALID', {
    res: ctx.res,
  });
  if (status !== 400 && hasBody(ctx)) {
    // Answered before the body was read: the connection closes rather than Node discarding an
    // upload of any size to keep it alive.
    closeAfterAnswer(ctx);
  }
  ctx.status = status;
  ctx.body = { error };
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

function tooLarge(ctx: Context): void {
  // The rest of the body is not read: the connection closes after this answer instead.
  fail(ctx, 413, `the body must be at most ${MAX_BODY_BYTES} bytes`);
}

const GONE = Symbol('client gone');

/**
 * The request's body, undefined as soon as it passes `limit` bytes (then nothing more is read), or
 * GONE if the client left before sending it all.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined | typeof GONE> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        cleanup();
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    // An aborted upload ends in 'error' (ECONNRESET) or in 'close' without 'end'.
    const onGone = () => {
      cleanup();
      resolve(GONE);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
