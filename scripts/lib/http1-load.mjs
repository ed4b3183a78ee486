// HTTP/1.1 load with autocannon over keep-alive connections, every request accounted for.
import autocannon from 'autocannon';

/**
 * A request of the load: a path to GET, or a method, path and body.
 * @typedef {string | { method: string, path: string, body?: string, headers?: Record<string, string> }} LoadRequest
 */

/**
 * Sends exactly `amount` requests, or requests until `signal` aborts, over `connections` keep-alive
 * connections (at most `rate` a second in all, when set), cycling `paths`, and counts how each
 * ended. autocannon writes its next request on a connection as soon as an answer ends, even when
 * that answer said `Connection: close`: that request goes to a server that already closed the
 * connection, and autocannon silently loses it (no error, no answer; measured: 400 requests of
 * 20,000 against a plain node:http server closing one connection in 50). RFC 9112 §9.6 requires a
 * client to stop sending on such a connection, as browsers and Node's own client do, so this one
 * does: after a `close` answer it opens a new connection for its next request. Resolves with
 * `answered` (2xx and 304), `failed` (any other status), autocannon's `errors` and `timeouts`, and
 * `closes` (answers that closed their connection); requests still in flight when `signal` aborts
 * are in none of them. Rejects past `deadlineMs`.
 * @param {{ url: string, paths: LoadRequest[], amount?: number, signal?: AbortSignal, connections?: number, rate?: number, deadlineMs?: number }} options
 */
export async function http1Load({
  url,
  paths,
  amount,
  signal,
  connections = 8,
  rate,
  deadlineMs = 60_000,
}) {
  let closes = 0;
  let next = 0;
  const instance = autocannon({
    url,
    connections,
    // Until aborted: past the deadline, which rejects first.
    ...(amount === undefined ? { duration: deadlineMs / 1000 + 1 } : { amount }),
    ...(rate === undefined ? {} : { overallRate: rate }),
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => {
          const chosen = paths[next++ % paths.length];
          return { ...request, ...(typeof chosen === 'string' ? { path: chosen } : chosen) };
        },
      },
    ],
    setupClient(client) {
      let closing = false;
      client.on('headers', (info) => (closing ||= info.shouldKeepAlive === false));
      const doRequest = client._doRequest;
      client._doRequest = function (...args) {
        if (closing) {
          closing = false;
          closes++;
          // What autocannon's own reconnectRate does; _connect sends the next request.
          this._destroyConnection();
          this._connect();
          return;
        }
        return doRequest.apply(this, args);
      };
    },
  });
  signal?.addEventListener('abort', () => instance.stop(), { once: true });
  let timer;
  const overdue = new Promise((_, reject) => {
    timer = setTimeout(() => {
      instance.stop();
      reject(
        new Error(
          amount === undefined
            ? `load not stopped within ${deadlineMs} ms`
            : `${amount} requests not answered within ${deadlineMs} ms`,
        ),
      );
    }, deadlineMs);
  });
  try {
    const result = await Promise.race([instance, overdue]);
    const statuses = Object.fromEntries(
      Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, Number(count)]),
    );
    const answered = Object.entries(statuses)
      .filter(([code]) => code.startsWith('2') || code === '304')
      .reduce((sum, [, count]) => sum + count, 0);
    return {
      sent: next,
      answered,
      failed: result['2xx'] + result.non2xx - answered,
      statuses,
      errors: result.errors,
      timeouts: result.timeouts,
      closes,
    };
  } finally {
    clearTimeout(timer);
  }
}
