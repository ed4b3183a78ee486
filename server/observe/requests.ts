// Every request told on the request channel (observe/channels.ts), on both entrances (the fast path
// and Koa) and both protocols: at its arrival, and once its response ended; its work that may
// outlive the call (Koa's), or all of it when an observer asks, runs on the request-work channel,
// where the tracer's context is entered. The observers subscribe; with none, a request costs four
// property reads here.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  channels,
  enteredAll,
  followed,
  named,
  nameRequest,
  observed,
  type RouteMessage,
} from '../channels.ts';

/**
 * `handle` with each request told, and named at its end by `nameOf` when no step named it (a file, a
 * prerendered page, a redirect): one function names those, for every observer. `fromMemory`, when
 * given, answers first what it can before the call returns, or says no (fast-path.ts).
 */
export function observedRequests(
  handle: RequestListener,
  nameOf: (req: IncomingMessage, res: ServerResponse) => RouteMessage | undefined,
  fromMemory?: (req: IncomingMessage, res: ServerResponse) => boolean,
): RequestListener {
  const { request, requestWork: work } = channels;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    if (fromMemory?.(req, res) !== true) {
      handle(req, res);
    }
  };
  return (req, res) => {
    if (!observed(request) && !channels.route.hasSubscribers && !work.hasSubscribers) {
      answer(req, res);
      return;
    }
    // As tracePromise publishes, without its promise: start and end around the handler,
    // asyncStart and asyncEnd once the response ended.
    const message = { req, res };
    request.start.publish(message);
    // A request no observer follows (one the tracer left out, nothing else on) ends untold.
    if (followed(res)) {
      res.once('close', () => {
        if (!named(res)) {
          const route = nameOf(req, res);
          if (route !== undefined) {
            nameRequest(route);
          }
        }
        request.asyncStart.publish(message);
        request.asyncEnd.publish(message);
      });
    }
    // Its answer from memory runs in no observer's store unless one asked (enterAll).
    if (enteredAll(res)) {
      work.runStores(message, answer, undefined, req, res);
    } else if (fromMemory?.(req, res) !== true) {
      work.runStores(message, handle, undefined, req, res);
    }
    request.end.publish(message);
  };
}
