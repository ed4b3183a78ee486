// ACCESS_LOG: one line per request at its end, answered on the fast path or by Koa: method, URL,
// status, milliseconds, the route that answered, how the render cache did and the failure's code;
// its trace and span ids when traced (the logger's mixin reads them from the request's context, in
// which the line is written). A response whose client left first says so (`aborted`). Off by
// default: a line per request costs throughput.
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import {
  channels,
  follow,
  type ErrorMessage,
  type PageServedMessage,
  type RequestMessage,
  type RouteMessage,
} from '../channels.ts';

/** What the access log keeps of a request until its line is written. */
interface Seen {
  startMs: number;
  route?: string;
  entrance?: string;
  cache?: string;
  code?: string;
}

/** Subscribes the access log; returns what undoes it. */
export function logRequests(log: Logger): () => void {
  const seen = new WeakMap<ServerResponse, Seen>();
  const request = {
    start: ({ res }: RequestMessage) => {
      follow(res);
      seen.set(res, { startMs: performance.now() });
    },
    asyncEnd: ({ req, res }: RequestMessage) => {
      const it = seen.get(res);
      if (it === undefined) {
        return;
      }
      seen.delete(res);
      log.info(lineOf(req, res, it), 'request');
    },
  };
  const route = (message: unknown) => {
    const { res, route: name, entrance } = message as RouteMessage;
    const it = seen.get(res);
    if (it !== undefined) {
      it.route = name;
      it.entrance ??= entrance;
    }
  };
  const served = (message: unknown) => {
    const { res, cache } = message as PageServedMessage;
    const it = seen.get(res);
    if (it !== undefined && cache !== undefined) {
      it.cache = cache;
    }
  };
  const failed = (message: unknown) => {
    const { res, code } = message as ErrorMessage;
    const it = res && seen.get(res);
    if (it !== undefined) {
      it.code = code;
    }
  };
  channels.request.subscribe(request as never);
  channels.route.subscribe(route);
  channels.pageServed.subscribe(served);
  channels.error.subscribe(failed);
  return () => {
    channels.request.unsubscribe(request as never);
    channels.route.unsubscribe(route);
    channels.pageServed.unsubscribe(served);
    channels.error.unsubscribe(failed);
  };
}

/** A request's line: never its headers; `aborted` when its client left first, `code` for a failure. */
function lineOf(
  req: RequestMessage['req'],
  res: ServerResponse,
  it: Seen,
): Record<string, unknown> {
  // Set, not spread: the build lowers object spread to a slow helper (docs/architecture.md).
  const line: Record<string, unknown> = {
    method: req.method,
    url: req.url,
    status: res.statusCode,
    ms: +(performance.now() - it.startMs).toFixed(2),
    route: it.route,
    cache: it.cache,
    answer: it.entrance ?? 'koa',
  };
  if (!res.writableFinished) {
    line['aborted'] = true;
  }
  if (it.code !== undefined) {
    line['code'] = it.code;
  }
  return line;
}
