// One plain HTTP/1.1 request over loopback, for the correctness checks (not for load).
import { request as httpRequest } from 'node:http';

/**
 * @typedef {{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }} HttpResponse
 * @param {string} baseUrl
 * @param {string} path
 * @param {{ method?: string, headers?: Record<string, string>, timeoutMs?: number }} [options]
 * @returns {Promise<HttpResponse>}
 */
export function httpGet(baseUrl, path, { method = 'GET', headers = {}, timeoutMs = 15_000 } = {}) {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method, headers: { connection: 'close', ...headers }, agent: false },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer to ${method} ${path} in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
