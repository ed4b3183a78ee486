import { api } from './api';
import { makeProduct, MAX_PRODUCT_ID } from './products';

/** The API's answer to `method path`, with its JSON body read (none for HEAD and 304). */
async function ask(path: string, init: RequestInit = {}) {
  const response = await api(new Request(`http://localhost${path}`, init));
  if (response === null) return null;
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}

describe('the demo API', () => {
  it('answers a product as JSON, with what caches need: Cache-Control, a strong ETag, its tag', async () => {
    const answer = (await ask('/api/products/7'))!;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.json).toEqual(makeProduct(7));
    expect(answer.headers.get('cache-control')).toBe(
      'public, max-age=300, stale-while-revalidate=600',
    );
    expect(answer.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
    expect(answer.headers.get('cache-tag')).toBe('product-7');
    expect(answer.headers.get('content-length')).toBe(String(new Blob([answer.text]).size));
  });

  it('answers the catalog every page shares, tagged catalog', async () => {
    const answer = (await ask('/api/catalog'))!;
    expect(answer.status).toBe(200);
    expect((answer.json!['categories'] as unknown[]).length).toBe(8);
    expect(answer.headers.get('cache-control')).toBe(
      'public, max-age=60, stale-while-revalidate=600',
    );
    expect(answer.headers.get('cache-tag')).toBe('catalog');
  });

  it('answers 304 to a matching If-None-Match, weak or in a list, and 200 to another', async () => {
    const etag = (await ask('/api/products/7'))!.headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const answer = (await ask('/api/products/7', { headers: { 'if-none-match': header } }))!;
      expect(answer.status, header).toBe(304);
      expect(answer.text).toBe('');
      expect(answer.headers.get('etag')).toBe(etag);
      expect(answer.headers.get('cache-control')).toMatch(/max-age=300/);
    }
    const other = (await ask('/api/products/8', { headers: { 'if-none-match': etag } }))!;
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = (await ask('/api/products/7', { method: 'HEAD' }))!;
    const get = (await ask('/api/products/7'))!;
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
  });

  it('says what is wrong with a request as JSON that no cache keeps', async () => {
    const cases: [string, RequestInit, number, RegExp][] = [
      ['/api/products/abc', {}, 400, /whole number/],
      ['/api/products/007', {}, 400, /without leading zeros/],
      ['/api/products/-1', {}, 400, /whole number/],
      ['/api/products/0', {}, 400, /from 1/],
      [`/api/products/${MAX_PRODUCT_ID + 1}`, {}, 404, /no product 1000000/],
      ['/api/products/7/specs', {}, 404, /no such resource/],
      ['/api/products', {}, 404, /no such resource/],
      ['/api/products/', {}, 400, /whole number/],
      ['/api/nothing', {}, 404, /no such resource/],
      ['/api', {}, 404, /no such resource/],
      ['/api/catalog', { method: 'POST', body: '{}' }, 405, /GET, HEAD only/],
      ['/api/products/7', { method: 'DELETE' }, 405, /GET, HEAD only/],
    ];
    for (const [path, init, status, error] of cases) {
      const answer = (await ask(path, init))!;
      const what = `${init.method ?? 'GET'} ${path}`;
      expect(answer.status, what).toBe(status);
      expect(answer.headers.get('cache-control'), what).toBe('no-store');
      expect(answer.headers.get('content-type'), what).toBe('application/json');
      expect(answer.json!['error'], what).toMatch(error);
    }
    expect((await ask('/api/catalog', { method: 'POST' }))!.headers.get('allow')).toBe('GET, HEAD');
  });

  it('quotes at most a few characters of a huge id', async () => {
    const answer = (await ask(`/api/products/${'9'.repeat(10_000)}`))!;
    expect(answer.status).toBe(404);
    expect(answer.text.length).toBeLessThan(100);
  });

  it('answers nothing outside /api/: the server answers those itself', async () => {
    for (const path of ['/', '/products/7', '/apis/catalog', '/api-docs']) {
      expect(await ask(path), path).toBeNull();
    }
  });
});
