// Hostile and malformed requests: each gets a precise 4xx, no stack trace, and the origin lives on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest, request, startOrigin } from '../helpers/origin.mjs';

let origin;
before(async () => {
  origin = await startOrigin();
});
after(async () => {
  await origin?.stop();
});

const STACK = /\n\s+at |Error:|node_modules|\/work\//;
const raw = (lines) => rawRequest(origin.port, `${lines.join('\r\n')}\r\n\r\n`);

async function assertStillServing() {
  const res = await request(origin.url, '/products/11');
  assert.equal(res.status, 200, 'the origin stopped serving');
}

describe('host', () => {
  it('rejects two Host headers with 400', async () => {
    const res = await raw(['GET /products/1 HTTP/1.1', 'Host: localhost', 'Host: evil.example', 'Connection: close']);
    assert.equal(res.status, 400);
    assert.ok(!STACK.test(res.raw));
  });

  it('rejects a request without a Host header with 400', async () => {
    for (const version of ['HTTP/1.1', 'HTTP/1.0']) {
      const res = await raw([`GET /products/1 ${version}`, 'Connection: close']);
      assert.equal(res.status, 400, version);
    }
  });

  it('rejects an absolute-form target naming another host with 400', async () => {
    const res = await raw(['GET http://evil.example/products/1 HTTP/1.1', 'Host: localhost', 'Connection: close']);
    assert.equal(res.status, 400);
    assert.ok(!res.raw.includes('evil.example'));
  });

  it('ignores X-Forwarded-Host and -Proto unless a trusted proxy is configured', async () => {
    const res = await request(origin.url, '/products/12', {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    });
    assert.equal(res.status, 200);
    assert.ok(!res.text.includes('evil.example'));
  });

  it('checks X-Forwarded-Host against the allowed hosts when TRUST_PROXY is on', async () => {
    const proxied = await startOrigin({ env: { TRUST_PROXY: 'true', NG_ALLOWED_HOSTS: 'shop.example' } });
    try {
      const forged = await request(proxied.url, '/products/3', {
        headers: { host: 'shop.example', 'x-forwarded-host': 'evil.example' },
      });
      assert.equal(forged.status, 400);
      const good = await request(proxied.url, '/products/3', {
        headers: { host: 'internal:8080', 'x-forwarded-host': 'shop.example', 'x-forwarded-proto': 'https' },
      });
      assert.equal(good.status, 200);
    } finally {
      await proxied.stop();
    }
  });
});

describe('paths', () => {
  const cases = [
    ['raw dot segments', '/../../etc/passwd'],
    ['raw dot segments after a file', '/favicon.ico/../../../etc/passwd'],
    ['encoded dot segments', '/%2e%2e/%2e%2e/etc/passwd'],
    ['mixed encoded dot segments', '/.%2e/.%2E/etc/passwd'],
    ['encoded slash and dots', '/..%2f..%2fetc%2fpasswd'],
    ['encoded backslashes', '/..%5c..%5cetc%5cpasswd'],
    ['raw backslash', '/products\\1'],
    ['encoded null byte', '/favicon.ico%00.html'],
    ['malformed percent-encoding in the path', '/products/%E0%A4%A'],
    ['truncated percent-encoding', '/products/%'],
    ['malformed percent-encoding in the query', '/products/1?q=%E0%A4%A'],
  ];
  for (const [name, path] of cases) {
    it(`answers ${name} (${path}) with 400 and no stack`, async () => {
      const res = await raw([`GET ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close']);
      assert.equal(res.status, 400, res.raw.slice(0, 200));
      assert.ok(!STACK.test(res.raw), res.raw.slice(0, 500));
      assert.ok(!res.raw.includes('root:'), 'served a file outside the build');
    });
  }

  it('answers a 9 KB URL with 414', async () => {
    const res = await request(origin.url, `/${'a'.repeat(9000)}`);
    assert.equal(res.status, 414);
  });

  it('answers a 20 KB URL or header with 431', async () => {
    assert.equal((await request(origin.url, `/${'a'.repeat(20_000)}`)).status, 431);
    assert.equal((await request(origin.url, '/', { headers: { 'x-big': 'b'.repeat(20_000) } })).status, 431);
  });

  it('answers a garbage request line with 400', async () => {
    const res = await rawRequest(origin.port, 'THIS IS NOT HTTP\r\n\r\n');
    assert.equal(res.status, 400);
  });

  it('is still serving after all of that', assertStillServing);
});

describe('methods', () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    it(`answers ${method} on pages and files with 405 and Allow`, async () => {
      for (const path of ['/', '/products/1', '/dashboard', '/favicon.ico']) {
        const res = await request(origin.url, path, { method, body: 'x=1' });
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.deepEqual(res.headers.allow?.split(/,\s*/).sort(), ['GET', 'HEAD'], `${method} ${path}`);
      }
    });
  }

  it('answers OPTIONS with the allowed methods', async () => {
    const res = await request(origin.url, '/products/1', { method: 'OPTIONS' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers.allow?.split(/,\s*/).sort(), ['GET', 'HEAD']);
    assert.equal(res.body.length, 0);
  });

  it('answers an unknown method with 501 or 400, never 500', async () => {
    const res = await raw(['BREW /products/1 HTTP/1.1', 'Host: localhost', 'Connection: close']);
    assert.ok([400, 405, 501].includes(res.status), String(res.status));
  });

  it('does not read a request body on a page route', async () => {
    // 64 MB announced, 1 KB sent: the 405 arrives without the origin waiting for (or buffering) the rest.
    const res = await rawRequest(origin.port, ['POST /products/1 HTTP/1.1', 'Host: localhost', `Content-Length: ${64 * 1024 * 1024}`, '', 'x'.repeat(1024)].join('\r\n'), {
      afterWrite: (socket) => socket.once('data', () => socket.end()),
    });
    assert.equal(res.status, 405);
  });
});

describe('conditional and range requests (RFC 9110)', () => {
  it('compares If-None-Match weakly, in lists and with *', async () => {
    for (const path of ['/', '/products/7', '/favicon.ico']) {
      const { headers } = await request(origin.url, path);
      const etag = headers.etag;
      const weak = etag.startsWith('W/') ? etag : `W/${etag}`;
      const strong = etag.replace(/^W\//, '');
      for (const value of [etag, weak, strong, `"nope", ${etag}`, `"a","b" , ${weak}`, '*']) {
        const res = await request(origin.url, path, { headers: { 'if-none-match': value } });
        assert.equal(res.status, 304, `${path} If-None-Match: ${value}`);
      }
      const miss = await request(origin.url, path, { headers: { 'if-none-match': '"nope", W/"other"' } });
      assert.equal(miss.status, 200, path);
    }
  });

  it('lets If-None-Match win over If-Modified-Since', async () => {
    const { headers } = await request(origin.url, '/favicon.ico');
    const lastModified = new Date(headers['last-modified']);
    const before = new Date(lastModified.getTime() - 60_000).toUTCString();
    const after = new Date(lastModified.getTime() + 60_000).toUTCString();
    const matching = await request(origin.url, '/favicon.ico', {
      headers: { 'if-none-match': headers.etag, 'if-modified-since': before },
    });
    assert.equal(matching.status, 304, 'a matching ETag must give 304 whatever If-Modified-Since says');
    const stale = await request(origin.url, '/favicon.ico', {
      headers: { 'if-none-match': '"old"', 'if-modified-since': after },
    });
    assert.equal(stale.status, 200, 'a stale ETag must give 200 whatever If-Modified-Since says');
  });

  it('answers If-Modified-Since where Last-Modified is sent', async () => {
    const { headers } = await request(origin.url, '/favicon.ico');
    assert.ok(headers['last-modified']);
    const same = await request(origin.url, '/favicon.ico', { headers: { 'if-modified-since': headers['last-modified'] } });
    assert.equal(same.status, 304);
    const older = new Date(new Date(headers['last-modified']).getTime() - 60_000).toUTCString();
    const changed = await request(origin.url, '/favicon.ico', { headers: { 'if-modified-since': older } });
    assert.equal(changed.status, 200);
  });

  it('repeats on 304 the headers a 304 must repeat', async () => {
    for (const path of ['/', '/products/7', '/favicon.ico']) {
      const full = await request(origin.url, path);
      const res = await request(origin.url, path, { headers: { 'if-none-match': full.headers.etag } });
      assert.equal(res.status, 304);
      assert.equal(res.headers.etag, full.headers.etag, path);
      assert.equal(res.headers['cache-control'], full.headers['cache-control'], path);
      assert.ok(res.headers.date, path);
      assert.equal(res.body.length, 0);
    }
  });

  it('says Accept-Ranges: none on files and answers a Range request with the whole file', async () => {
    const full = await request(origin.url, '/favicon.ico');
    const res = await request(origin.url, '/favicon.ico', { headers: { range: 'bytes=0-9' } });
    assert.equal(res.headers['accept-ranges'], 'none');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, full.body);
  });
});
