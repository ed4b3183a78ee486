// One request over loopback, with full control of the headers (fetch forbids setting Host): for
// checks and probes, not for load. `http://` goes over HTTP/1.1; `https://` (the origin with
// TLS_CERT and TLS_KEY, a self-signed certificate) over HTTP/2, or HTTP/1.1 with `http1`.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';

/**
 * @typedef {{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer, text: string,
 *   interim: { status: number, headers: Record<string, string | string[] | undefined> }[], httpVersion: string }} HttpResponse
 * @typedef {{ method?: string, headers?: Record<string, string>, body?: string | Buffer, timeoutMs?: number, http1?: boolean }} RequestOptions
 * @param {string} baseUrl
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<HttpResponse>}
 */
export function request(baseUrl, path, options = {}) {
  const url = new URL(baseUrl);
  if (url.protocol === 'https:' && !options.http1) {
    return http2Request(url, path, options);
  }
  return http1Request(url, path, options);
}

/** @param {URL} url @param {string} path @param {RequestOptions} options @returns {Promise<HttpResponse>} */
function http1Request(url, path, { method = 'GET', headers = {}, body, timeoutMs = 15_000 }) {
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const interim = [];
    const req = send(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        headers: { connection: 'close', ...length, ...headers },
        agent: false,
        // The tests' self-signed certificate; ALPN offers HTTP/1.1 alone.
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
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
            interim,
            httpVersion: res.httpVersion,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('information', ({ statusCode, headers: sent }) =>
      interim.push({ status: statusCode, headers: sent }),
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`no answer to ${method} ${path} in ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Over a session of its own, closed after the answer. A `host` header becomes `:authority`, as a
 * browser sends it over HTTP/2.
 * @param {URL} url @param {string} path @param {RequestOptions} options @returns {Promise<HttpResponse>}
 */
function http2Request(url, path, { method = 'GET', headers = {}, body, timeoutMs = 15_000 }) {
  const { host, ...rest } = headers;
  return new Promise((resolve, reject) => {
    const session = connect(url.origin, { rejectUnauthorized: false });
    session.on('error', reject);
    const timer = setTimeout(() => {
      session.destroy(new Error(`no answer to ${method} ${path} in ${timeoutMs} ms`));
    }, timeoutMs);
    const stream = session.request({
      ':method': method,
      ':path': path,
      ...(host === undefined ? {} : { ':authority': host }),
      ...rest,
    });
    const interim = [];
    let final;
    stream.on('headers', (sent) => interim.push({ status: sent[':status'], headers: sent }));
    stream.on('response', (sent) => (final = sent));
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      clearTimeout(timer);
      session.close();
      const buffer = Buffer.concat(chunks);
      const { ':status': status, ...sent } = final ?? {};
      resolve({
        status: Number(status ?? 0),
        headers: sent,
        body: buffer,
        text: buffer.toString('utf8'),
        interim,
        httpVersion: '2.0',
      });
    });
    stream.on('error', (error) => {
      clearTimeout(timer);
      session.destroy();
      reject(error);
    });
    stream.end(body);
  });
}
