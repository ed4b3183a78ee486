// Every request told on the request channel (observe/channels.ts), on both entrances (the fast path
// and Koa) and both protocols: at its arrival, with the tracer's context (when one listens) entered
// for all the request's work, and once its response ended. The observers subscribe; with none, a
// request costs three property reads here.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  channels,
  followed,
  named,
  nameRequest,
  observed,
  type RouteMessage,
} from '../channels.ts';

/**
 * `handle` with each request told, and named at its end by `nameOf` when no step named it (a file, a
 * prerendered page, a redirect): one function names those, for every observer.
 */
export function observedRequests(
  handle: RequestListener,
  nameOf: (req: IncomingMessage, res: ServerResponse) => RouteMessage | undefined,
): RequestListener {
  const request = channels.request;
  return (req, res) => {
    if (!observed(request) && !channels.route.hasSubscribers) {
      handle(req, res);
      return;
    }
    // As tracePromise publishes, without its promise: start (the tracer's context entered for all
    // the request's work) and end around the handler, asyncStart and asyncEnd once it ended.
    const message = { req, res };
    request.start.runStores(message, () => {
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
      handle(req, res);
    });
    request.end.publish(message);
  };
}
