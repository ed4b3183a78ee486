// CSP=strict over real HTTP on the tests' app: a fresh nonce per HTML answer, through prerendered
// pages, renders, the render cache and the client-side shell; none on 304s and non-HTML answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { at, request, startOrigin } from '../helpers/origin.mjs';

const NONCE = /'nonce-([A-Za-z0-9_-]{22})'/;

/** The nonce of an answer's policy header (enforced or report-only). */
function headerNonce(res, name = 'content-security-policy') {
  const policy = res.headers[name];
  assert.ok(policy, `no ${name} header`);
  const nonce = NONCE.exec(policy)?.[1];
  assert.ok(nonce, `no nonce in ${policy}`);
  return nonce;
}

/** Every <script>, <style> and <link> tag outside the app's root element, and the root's own tag. */
function trustedTags(html) {
  const start = html.indexOf('<app-root');
  const end = html.lastIndexOf('</app-root>');
  const outside = start === -1 ? html : html.slice(0, start) + html.slice(end);
  return {
    tags: [...outside.matchAll(/<(?:script|style|link)\b[^>]*>/g)].map((match) => match[0]),
    root: /<app-root\b[^>]*>/.exec(html)?.[0],
  };
}

/** Every <script> and <style> of the page carries `nonce` (the app's own markup holds none). */
function assertNonced(html, nonce, label) {
  const all = [...html.matchAll(/<(?:script|style)\b[^>]*>/g)].map((match) => match[0]);
  assert.ok(all.length > 0, `${label}: no script or style at all`);
  for (const tag of all) {
    assert.ok(tag.includes(` nonce="${nonce}"`), `${label}: ${tag} lacks the answer's nonce`);
  }
  assert.match(trustedTags(html).root, new RegExp(`ngcspnonce="${nonce}"`, 'i'), label);
}

const HTML_PAGES = {
  prerendered: '/',
  rendered: '/async-work?http=0',
  cached: '/products/3',
  'client-only': '/dashboard',
  'not found': '/no/such/page',
};

describe('CSP=strict', () => {
  let origin;
  before(async () => {
    origin = await startOrigin({ env: { CSP: 'strict' } });
  });
  after(() => origin?.stop());

  for (const [kind, path] of Object.entries(HTML_PAGES)) {
    it(`gives the ${kind} page a fresh nonce per answer, in the header and on every script and style`, async () => {
      const first = await request(origin.url, at(path));
      const second = await request(origin.url, at(path));
      const nonces = [first, second].map((res) => headerNonce(res));
      assert.notEqual(nonces[0], nonces[1], 'the same nonce twice');
      assertNonced(first.text, nonces[0], `${path} first`);
      assertNonced(second.text, nonces[1], `${path} second`);
      assert.ok(!second.text.includes(nonces[0]), 'the first nonce in the second answer');
      assert.equal(first.body.length, second.body.length);
      assert.equal(
        first.headers['content-security-policy'],
        `script-src 'nonce-${nonces[0]}' 'strict-dynamic'; style-src 'self' 'nonce-${nonces[0]}'; style-src-attr 'unsafe-inline'; ` +
          `object-src 'none'; base-uri 'self'`,
      );
      // No shared cache downstream may keep a page whose nonce is one response's.
      assert.equal(first.headers['cache-control'], 'private, no-cache');
      assert.equal(first.headers['cdn-cache-control'], 'no-store');
      if (first.status === 200) {
        // A validator of the stored page, not of these bytes: weak, the same for both answers.
        assert.match(first.headers.etag, /^W\/"/);
        assert.equal(second.headers.etag, first.headers.etag);
      }
    });
  }

  it('answers two hits on a cached page with different nonces, each matching its own header', async () => {
    await request(origin.url, at('/products/21'));
    const hits = [
      await request(origin.url, at('/products/21')),
      // A first-seen Host goes through Koa's pages step rather than the fast path.
      await request(origin.url, at('/products/21'), {
        headers: { host: `127.0.0.1:${origin.port}` },
      }),
    ];
    const nonces = [];
    for (const hit of hits) {
      assert.match(hit.headers['cache-status'], /^render-cache; hit/);
      const nonce = headerNonce(hit);
      assertNonced(hit.text, nonce, 'hit');
      nonces.push(nonce);
    }
    assert.notEqual(nonces[0], nonces[1]);
  });

  for (const [kind, path] of Object.entries(HTML_PAGES).filter(([kind]) => kind !== 'not found')) {
    it(`answers a revalidation of the ${kind} page with a 304 that carries no policy`, async () => {
      const { headers } = await request(origin.url, at(path));
      for (const extra of [{}, { host: `localhost:${origin.port}` }]) {
        const res = await request(origin.url, at(path), {
          headers: { 'if-none-match': headers.etag, ...extra },
        });
        assert.equal(res.status, 304, JSON.stringify(extra));
        assert.equal(res.headers['content-security-policy'], undefined);
        assert.equal(res.headers['content-type'], undefined);
        assert.equal(res.headers.etag, headers.etag);
        assert.equal(res.headers['cache-control'], 'private, no-cache');
      }
    });
  }

  it("leaves the attacker's markup without a nonce, and gives the app's own script (CSP_NONCE) this answer's", async () => {
    const res = await request(origin.url, at('/injected'));
    const nonce = headerNonce(res);
    const root = res.text.slice(res.text.indexOf('<app-root'), res.text.lastIndexOf('</app-root>'));
    // With RENDER_ENGINE=app, CSP_NONCE is null while Angular's own engine renders (it reads the
    // build's index, not the origin's), so the app adds no script of its own (docs/choosing-an-engine.md).
    const trusted =
      process.env['RENDER_ENGINE'] === 'app'
        ? []
        : [`<script nonce="${nonce}">window.trusted = true;</script>`];
    assert.deepEqual(
      [...root.matchAll(/<script\b[^>]*>[^<]*<\/script>/g)].map((match) => match[0]),
      [...trusted, '<script>window.injected = true;</script>'],
    );
    for (const tag of trustedTags(res.text).tags) {
      assert.ok(tag.includes(`nonce="${nonce}"`), tag);
    }
  });

  it('does no nonce work for files, missing files and health', async () => {
    const home = await request(origin.url, at('/'));
    const script = /src="(main-[^"]+\.js)"/.exec(home.text)[1];
    for (const path of [at(`/${script}`), at('/favicon.ico'), at('/missing.js'), '/healthz']) {
      const res = await request(origin.url, path);
      assert.equal(res.headers['content-security-policy'], undefined, path);
      assert.equal(res.headers['cdn-cache-control'], undefined, path);
    }
    assert.equal((await request(origin.url, at('/missing.js'))).text, 'Not Found');
  });

  it('property: every script and style of an HTML answer carries the nonce of its header', async () => {
    const paths = fc.oneof(
      fc.constantFrom('/', '/dashboard', '/async-work', '/injected'),
      fc.integer({ min: 1, max: 40 }).map((id) => `/products/${id}`),
      fc.stringMatching(/^[a-z]{1,8}$/).map((segment) => `/${segment}/x`),
    );
    const requests = fc.record({
      path: paths,
      method: fc.constantFrom('GET', 'GET', 'HEAD'),
      cookie: fc.boolean(),
      host: fc.constantFrom('127.0.0.1', 'localhost'),
    });
    await fc.assert(
      fc.asyncProperty(requests, async ({ path, method, cookie, host }) => {
        const res = await request(origin.url, at(path), {
          method,
          headers: { host: `${host}:${origin.port}`, ...(cookie ? { cookie: 'a=1' } : {}) },
        });
        const nonce = headerNonce(res);
        if (method === 'HEAD') {
          return;
        }
        for (const tag of trustedTags(res.text).tags) {
          assert.ok(tag.includes(` nonce="${nonce}"`), `${path}: ${tag}`);
        }
        if (path !== '/injected') {
          assertNonced(res.text, nonce, path);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('CSP with other settings', () => {
  it('holds HTML in memory to give it a nonce even when files are served from disk', async () => {
    const origin = await startOrigin({ env: { CSP: 'strict', STATIC_MEMORY_BYTES: '0' } });
    try {
      for (const path of ['/', '/index.csr.html']) {
        const res = await request(origin.url, at(path));
        assertNonced(res.text, headerNonce(res), path);
      }
      assert.equal(
        (await request(origin.url, at('/favicon.ico'))).headers['content-security-policy'],
        undefined,
      );
    } finally {
      await origin.stop();
    }
  });

  it("gives the origin's own error pages (503 when shedding load) the policy, each a nonce of its own", async () => {
    // One render at a time and no queue: of requests sent together, those that find the slot
    // taken are shed with the static 503 page.
    const origin = await startOrigin({
      env: { CSP: 'strict', MAX_CONCURRENT_RENDERS: '1', RENDER_QUEUE_LIMIT: '0' },
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => request(origin.url, at(`/async-work?shed=${i}`))),
      );
      const shed = answers.filter((res) => res.status === 503);
      assert.ok(shed.length > 0, `no request was shed: ${answers.map((res) => res.status)}`);
      const nonces = shed.map((res) => headerNonce(res));
      assert.equal(new Set(nonces).size, nonces.length, 'a nonce per answer');
      for (const res of shed) {
        assert.match(res.headers['content-type'], /^text\/html/);
        assert.doesNotMatch(res.text, /<script|<style/);
      }
    } finally {
      await origin.stop();
    }
  });

  it('CSP_REPORT_TO names a Reporting API endpoint on every HTML answer, never on a 304', async () => {
    const origin = await startOrigin({
      env: { CSP: 'strict', CSP_REPORT_TO: 'https://reports.example/csp' },
    });
    try {
      // Prerendered, rendered and stored, the same page from the render cache, client-only.
      for (const path of ['/', '/products/6', '/products/6', '/dashboard']) {
        const res = await request(origin.url, at(path));
        assert.equal(res.status, 200, path);
        assert.equal(
          res.headers['reporting-endpoints'],
          'csp-endpoint="https://reports.example/csp"',
          path,
        );
        assert.match(res.headers['content-security-policy'], /; report-to csp-endpoint$/, path);
        const revalidated = await request(origin.url, at(path), {
          headers: { 'if-none-match': res.headers.etag },
        });
        assert.equal(revalidated.status, 304, path);
        assert.equal(revalidated.headers['reporting-endpoints'], undefined, path);
        assert.equal(revalidated.headers['content-security-policy'], undefined, path);
      }
      const asset = await request(origin.url, at('/favicon.ico'));
      assert.equal(asset.headers['reporting-endpoints'], undefined);
    } finally {
      await origin.stop();
    }
  });

  it('CSP=report-only sends the same policy, with CSP_DIRECTIVES added, as Content-Security-Policy-Report-Only', async () => {
    const origin = await startOrigin({
      env: {
        CSP: 'report-only',
        CSP_DIRECTIVES:
          "connect-src 'self' https://api.example; img-src 'self' https://img.example; style-src https://fonts.example; report-uri /csp-reports",
      },
    });
    try {
      for (const path of ['/', '/products/5', '/dashboard']) {
        const res = await request(origin.url, at(path));
        assert.equal(res.headers['content-security-policy'], undefined);
        const nonce = headerNonce(res, 'content-security-policy-report-only');
        assert.equal(
          res.headers['content-security-policy-report-only'],
          `script-src 'nonce-${nonce}' 'strict-dynamic'; ` +
            `style-src 'self' 'nonce-${nonce}' https://fonts.example; style-src-attr 'unsafe-inline'; ` +
            `object-src 'none'; ` +
            `base-uri 'self'; connect-src 'self' https://api.example; ` +
            `img-src 'self' https://img.example; report-uri /csp-reports`,
        );
        assertNonced(res.text, nonce, path);
      }
    } finally {
      await origin.stop();
    }
  });
});
