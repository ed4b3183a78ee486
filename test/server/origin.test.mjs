// The production origin over real HTTP on loopback, against the real production build.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeProduct } from '../app/src/app/products.ts';
import { SAYS, at, request, siteDirs, startOrigin } from '../helpers/origin.mjs';

const browserDir = siteDirs().browser;
const browserFiles = readdirSync(browserDir);
const mainJs = browserFiles.find((name) => /^main-.+\.js$/.test(name));
const stylesCss = browserFiles.find((name) => /^styles-.+\.css$/.test(name));
const lazyChunk = browserFiles.find((name) => /^chunk-.+\.js$/.test(name));

let origin;
before(async () => {
  origin = await startOrigin();
});
after(async () => {
  await origin?.stop();
});

const get = (path, options) => request(origin.url, at(path), options);

describe('prerendered page /', () => {
  it('is the prerendered file, byte for byte, not a new render', async () => {
    const res = await get('/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.deepEqual(res.body, readFileSync(join(browserDir, 'index.html')));
    assert.ok(/ng-server-context="ssg"/.test(res.text), '/ng-server-context="ssg"/');
  });

  it('holds the page as rendered at build time (test/app/src/app/pages/home.ts)', async () => {
    const { text } = await get('/');
    assert.ok(text.includes(`<h1>${SAYS.welcome}</h1>`), 'missing the heading');
    for (const label of ['First name', 'Last name', 'Submit']) {
      assert.ok(text.includes(label), `missing "${label}"`);
    }
    assert.ok(/<form class="form-row"/.test(text), '/<form class="form-row"/');
  });

  it('must be revalidated and carries an ETag', async () => {
    const res = await get('/');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.ok(res.headers.etag, 'no ETag');
  });
});

describe('server-rendered page /products/:id', () => {
  it('renders per request from the id: two ids, two different pages', async () => {
    const [seven, eight] = await Promise.all([get('/products/7'), get('/products/8')]);
    for (const [res, id] of [
      [seven, 7],
      [eight, 8],
    ]) {
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.ok(/ng-server-context="ssr"/.test(res.text), '/ng-server-context="ssr"/');
      const product = makeProduct(id);
      assert.ok(res.text.includes(`<h1>${product.name}</h1>`), `missing ${product.name}`);
      assert.ok(res.text.includes(product.description), `missing description of ${id}`);
    }
    assert.notDeepEqual(seven.body, eight.body);
    assert.ok(!seven.text.includes(makeProduct(8).name));
  });

  it('keeps the query string in the rendered URL without breaking the route', async () => {
    const res = await get('/products/9?ref=mail');
    assert.equal(res.status, 200);
    assert.ok(res.text.includes(makeProduct(9).name));
  });

  it('inlines critical CSS and keeps hydration annotations', async () => {
    const { text } = await get('/products/7');
    assert.ok(/<style>[^<]+<\/style>/.test(text), 'no inlined critical CSS');
    assert.ok(/ngh="\d+"/.test(text), 'no hydration annotations');
    assert.ok(
      /<link rel="stylesheet" href="styles-[^"]+\.css" media="print"/.test(text),
      'stylesheet not deferred by critical CSS',
    );
  });
});

describe('client-rendered page /dashboard', () => {
  it('is the client-side shell, not a server render', async () => {
    const res = await get('/dashboard');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.deepEqual(res.body, readFileSync(join(browserDir, 'index.csr.html')));
    assert.ok(/<app-root><\/app-root>/.test(res.text), '<app-root></app-root>');
    assert.ok(!res.text.includes('Rendered in the browser'));
  });
});

describe('not found', () => {
  for (const path of ['/no/such/page', '/products/0', '/products/abc', '/products/7/extra']) {
    it(`renders the not-found page with 404 for ${path}`, async () => {
      const res = await get(path);
      assert.equal(res.status, 404);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.ok(res.text.includes(`<h1>${SAYS.notFound}</h1>`), `<h1>${SAYS.notFound}</h1>`);
      assert.ok(/ng-server-context="ssr"/.test(res.text), '/ng-server-context="ssr"/');
    });
  }

  it('answers a missing asset with a plain 404, without rendering the app', async () => {
    for (const path of ['/missing-ABCDEFGH.js', '/media/nothing.png', '/styles-XXXXXXXX.css']) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.headers['content-type'] ?? '', /html/, path);
      assert.ok(!res.text.includes(SAYS.notFound), path);
    }
  });
});

describe('assets', () => {
  it('found the build files to test', () => {
    assert.ok(mainJs, 'no main-*.js in dist/browser');
    assert.ok(stylesCss, 'no styles-*.css in dist/browser');
    assert.ok(lazyChunk, 'no chunk-*.js in dist/browser');
  });

  it('serves hashed bundles as immutable for a year', async () => {
    for (const [name, type] of [
      [mainJs, 'text/javascript; charset=utf-8'],
      [lazyChunk, 'text/javascript; charset=utf-8'],
      [stylesCss, 'text/css; charset=utf-8'],
    ]) {
      const res = await get(`/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers['content-type'], type, name);
      assert.equal(res.headers['cache-control'], 'max-age=31536000, immutable', name);
      assert.deepEqual(res.body, readFileSync(join(browserDir, name)), name);
    }
  });

  it('revalidates files whose name does not change with their content', async () => {
    const res = await get('/favicon.ico');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.ok(res.headers.etag);
  });
});

describe('conditional requests', () => {
  for (const path of ['/', '/products/7', '/dashboard', '/favicon.ico']) {
    it(`answers If-None-Match with the current ETag by 304 for ${path}`, async () => {
      const first = await get(path);
      const etag = first.headers.etag;
      assert.ok(etag, 'no ETag');
      const second = await get(path, { headers: { 'if-none-match': etag } });
      assert.equal(second.status, 304);
      assert.equal(second.body.length, 0);
      assert.equal(second.headers.etag, etag);
    });
  }

  it('answers a stale ETag with the full page', async () => {
    const res = await get('/', { headers: { 'if-none-match': '"stale"' } });
    assert.equal(res.status, 200);
    assert.ok(res.body.length > 0);
  });
});

describe('HEAD', () => {
  for (const path of [
    '/',
    '/products/7',
    '/dashboard',
    '/no/such/page',
    '/favicon.ico',
    '/missing.js',
  ]) {
    it(`answers like GET without a body for ${path}`, async () => {
      const [getRes, headRes] = [await get(path), await get(path, { method: 'HEAD' })];
      assert.equal(headRes.status, getRes.status);
      assert.equal(headRes.body.length, 0);
      assert.equal(headRes.headers['content-type'], getRes.headers['content-type']);
      assert.equal(headRes.headers['content-length'], String(getRes.body.length));
      assert.equal(headRes.headers['cache-control'], getRes.headers['cache-control']);
    });
  }
});

describe('headers', () => {
  it('never says X-Powered-By', async () => {
    for (const path of ['/', '/products/7', '/dashboard', '/nope', `/${mainJs}`]) {
      const res = await get(path);
      assert.equal(res.headers['x-powered-by'], undefined, path);
    }
  });

  it('answers other methods on pages with 405 and Allow', async () => {
    const res = await get('/products/7', { method: 'POST', body: 'x=1' });
    assert.equal(res.status, 405);
    assert.match(res.headers.allow ?? '', /GET/);
    assert.match(res.headers.allow ?? '', /HEAD/);
  });
});

describe('allowed hosts', () => {
  it('answers localhost and 127.0.0.1 by default, with or without a port', async () => {
    for (const host of ['localhost', '127.0.0.1', `localhost:${origin.port}`, 'LOCALHOST']) {
      const res = await get('/products/7', { headers: { host } });
      assert.equal(res.status, 200, host);
    }
  });

  it('rejects any other host with 400 before rendering', async () => {
    for (const host of ['evil.example', 'localhost.evil.example', 'evil.example:80']) {
      const res = await get('/products/7', { headers: { host } });
      // CommonEngine would have refused this host with a 500 had the render started.
      assert.equal(res.status, 400, host);
      assert.doesNotMatch(res.headers['content-type'] ?? '', /html/);
      assert.ok(!/at \w+ \(|Error:/.test(res.text), 'stack or error detail in the response');
    }
    assert.doesNotMatch(origin.stderr(), /is not allowed/, 'the engine saw the forged host');
  });

  it('rejects a forged host on files too', async () => {
    const res = await get('/', { headers: { host: 'evil.example' } });
    assert.equal(res.status, 400);
  });
});

describe('logging', () => {
  it('logs one startup line (JSON) with the URL and nothing per request', async () => {
    await get('/products/7');
    await get('/');
    const lines = origin
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.length, 1, origin.stdout());
    assert.equal(lines[0].level, 30);
    assert.equal(lines[0].msg, `Origin listening on http://127.0.0.1:${origin.port}`);
    assert.equal(lines[0].url, `http://127.0.0.1:${origin.port}`);
  });
});
