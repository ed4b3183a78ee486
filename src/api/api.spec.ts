import { visitorGroup } from '../app/visitor';
import { api } from './api';
import { makeProduct, MAX_PRODUCT_ID } from './products';
import { MAX_CARTS, type OriginApi } from './visitors';

/** The API's answer to `method path`, with its JSON body read (none for HEAD and 304). */
async function ask(path: string, init: RequestInit = {}, origin?: OriginApi) {
  const response = await api(new Request(`http://localhost${path}`, init), origin);
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

  describe("the signed-in visitor's resources", () => {
    /** A session of its own per test: the carts live in the module, across tests. */
    const session = () => `t${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const as = (sid: string, init: RequestInit = {}): RequestInit => ({
      ...init,
      headers: { cookie: `_ga=GA1.2; sid=${sid}`, 'content-type': 'application/json' },
    });
    const add = (sid: string, product: unknown, origin?: OriginApi) =>
      ask('/api/cart', as(sid, { method: 'POST', body: JSON.stringify({ product }) }), origin);

    it('names the visitor of the sid cookie with their cart, privately', async () => {
      const answer = (await ask('/api/me', as('abcd1234')))!;
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ name: 'Visitor abcd', cart: { count: 0 } });
      expect(answer.headers.get('cache-control')).toBe('private, no-store');
      expect(answer.headers.get('content-type')).toBe('application/json');
    });

    it('answers 401 without a valid session, and 405 to other methods', async () => {
      for (const init of [
        {},
        { headers: { cookie: 'sid=' } },
        { headers: { cookie: 'sid=a b' } },
      ]) {
        for (const path of ['/api/me', '/api/cart']) {
          const answer = (await ask(path, init))!;
          expect(answer.status, path).toBe(401);
          expect(answer.headers.get('cache-control')).toBe('no-store');
          expect(answer.json!['error']).toMatch(/no session/);
        }
      }
      expect((await ask('/api/me', as('abcd', { method: 'POST', body: '{}' })))!.status).toBe(405);
      const deleted = (await ask('/api/cart', as('abcd', { method: 'DELETE' })))!;
      expect(deleted.status).toBe(405);
      expect(deleted.headers.get('allow')).toBe('GET, HEAD, POST');
    });

    it("counts a visitor's cart, adds to it, and revalidates the visitor's group after an add", async () => {
      const sid = session();
      const other = session();
      const revalidated: unknown[] = [];
      const origin: OriginApi = {
        revalidate: (request) => Promise.resolve(revalidated.push(request)),
      };
      expect((await ask('/api/cart', as(sid)))!.json).toEqual({ count: 0 });
      expect((await add(sid, 7, origin))!.json).toEqual({ count: 1 });
      const second = (await add(sid, 8, origin))!;
      expect(second.json).toEqual({ count: 2 });
      expect(second.headers.get('cache-control')).toBe('private, no-store');
      expect((await ask('/api/cart', as(sid)))!.json).toEqual({ count: 2 });
      expect((await ask('/api/me', as(sid)))!.json).toMatchObject({ cart: { count: 2 } });
      expect((await ask('/api/cart', as(other)))!.json).toEqual({ count: 0 });
      expect((await ask('/api/me', as(other)))!.json).toMatchObject({ cart: { count: 0 } });
      const group = await visitorGroup(sid);
      expect(group).toMatch(/^visitor-[0-9a-f]{16}$/);
      expect(group).not.toContain(sid);
      expect(revalidated).toEqual([
        { groups: [group], mode: 'hard' },
        { groups: [group], mode: 'hard' },
      ]);
      // Mounted by another server: no origin to tell.
      expect((await add(sid, 9))!.json).toEqual({ count: 3 });
    });

    it('refuses an add that names no product', async () => {
      const sid = session();
      for (const product of [0, -1, 1.5, '7', null, MAX_PRODUCT_ID + 1]) {
        const answer = (await add(sid, product))!;
        expect(answer.status, String(product)).toBe(400);
        expect(answer.json!['error']).toMatch(/"product" must be a product id/);
      }
      const notJson = (await ask('/api/cart', as(sid, { method: 'POST', body: '{' })))!;
      expect(notJson.status).toBe(400);
      expect((await ask('/api/cart', as(sid)))!.json).toEqual({ count: 0 });
    });

    it(`keeps at most ${MAX_CARTS} carts, dropping the one written longest ago`, async () => {
      const first = session();
      await add(first, 1);
      const kept = session();
      await add(kept, 1);
      for (let i = 0; i < MAX_CARTS - 1; i++) {
        await add(`fill${i}`, 1);
      }
      // Written again, the kept cart is the newest; the first one went out.
      await add(kept, 1);
      await add('onemore', 1);
      expect((await ask('/api/cart', as(first)))!.json).toEqual({ count: 0 });
      expect((await ask('/api/cart', as(kept)))!.json).toEqual({ count: 2 });
    });
  });
});
