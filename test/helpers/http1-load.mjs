// HTTP/1.1 load with autocannon over keep-alive connections, every request accounted for.
import autocannon from 'autocannon';

/**
 * Sends exactly `amount` requests over `connections` keep-alive connections, cycling `paths`, and
 * counts how each ended. autocannon writes its next request on a connection as soon as an answer
 * ends, even when that answer said `Connection: close`: that request goes to a server that already
 * closed the connection, and autocannon silently loses it (no error, no answer; measured: 400
 * requests of 20,000 against a plain node:http server closing one connection in 50). RFC 9112
 * §9.6 requires a client to stop sending on such a connection, as browsers and Node's own client
 * do, so this one does: after a `close` answer it opens a new connection for its next request.
 * Resolves with `answered` (2xx and 304), `failed` (any other status), autocannon's `errors` and
 * `timeouts`, and `closes` (answers that closed their connection). Rejects past `deadlineMs`.
 * @param {{ url: string, paths: string[], amount: number, connections?: number, deadlineMs?: number }} options
 */
export async function http1Load({ url, paths, amount, connections = 8, deadlineMs = 60_000 }) {
  let closes = 0;
  let next = 0;
  const instance = autocannon({
    url,
    connections,
    amount,
    timeout: 10,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }],
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
  let timer;
  const overdue = new Promise((_, reject) => {
    timer = setTimeout(() => {
      instance.stop();
      reject(new Error(`${amount} requests not answered within ${deadlineMs} ms`));
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
