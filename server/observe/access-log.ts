import type { Logger } from 'pino';
import type { RequestObserver } from './exchange.ts';

/**
 * ACCESS_LOG: one line per request at its end, answered on the fast path or by Koa: method, URL,
 * status, milliseconds, the route that answered and how the render cache did; its trace and span
 * ids when traced, to find its trace from the line. A response whose client left first says so
 * (`aborted`). Off by default: a line per request costs throughput.
 */
export function accessLog(log: Logger): RequestObserver {
  return {
    ended(exchange, req, res, finished) {
      log.info(
        {
          method: req.method,
          url: req.url,
          status: res.statusCode,
          ms: +(performance.now() - exchange.startMs).toFixed(2),
          route: exchange.route,
          cache: exchange.cache,
          answer: exchange.entrance,
          ...(finished ? {} : { aborted: true }),
          ...(exchange.errorCode === undefined ? {} : { code: exchange.errorCode }),
          ...exchange.traceIds,
        },
        'request',
      );
    },
  };
}
