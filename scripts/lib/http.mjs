// One plain HTTP/1.1 request over loopback, with full control of the headers (fetch forbids
// setting Host): for checks and probes, not for load.
import { request as httpRequest } from 'node:http';

/**
 * @typedef {{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer, text: string }} HttpResponse
 * @param {string} baseUrl
 * @param {string} path
 * @param {{ method?: string, headers?: Record<string, string>, body?: string | Buffer, timeoutMs?: number }} [options]
 * @returns {Promise<HttpResponse>}
 */
export function request(
  baseUrl,
  path,
  { method = 'GET', headers = {}, body, timeoutMs = 15_000 } = {},
) {
  const url = new URL(baseUrl);
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        headers: { connection: 'close', ...length, ...headers },
        agent: false,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const buffer = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: buffer,
            text: buffer.toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`no answer to ${method} ${path} in ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}
