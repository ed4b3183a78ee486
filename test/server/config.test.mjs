// Configuration from the environment: working defaults, production hosts, one-line errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENGINE,
  onceForBothEngines,
  request,
  runOriginExpectingExit,
  startOrigin,
} from '../helpers/origin.mjs';

describe('configuration', onceForBothEngines('settings are read before an engine loads'), () => {
  it('serves production hosts named in NG_ALLOWED_HOSTS, and no others', async () => {
    const origin = await startOrigin({
      env: { NG_ALLOWED_HOSTS: 'shop.example, *.cdn.example' },
    });
    try {
      const status = async (host) =>
        (await request(origin.url, '/products/3', { headers: { host } })).status;
      assert.equal(await status('shop.example'), 200);
      assert.equal(await status('eu.cdn.example'), 200);
      assert.equal(await status('cdn.example'), 400);
      assert.equal(
        await status('localhost'),
        400,
        'defaults must not apply once hosts are configured',
      );
      assert.equal(await status('evil.example'), 400);
    } finally {
      await origin.stop();
    }
  });

  it('listens on PORT and HOST', async () => {
    const origin = await startOrigin({ env: { PORT: '0', HOST: '127.0.0.1' } });
    try {
      const lines = origin
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.equal(lines.length, 1);
      assert.equal(lines[0].msg, `Origin listening on http://127.0.0.1:${origin.port}`);
    } finally {
      await origin.stop();
    }
  });

  const bad = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ HOST: 'not a host' }, 'HOST'],
    [{ NG_ALLOWED_HOSTS: 'https://shop.example' }, 'NG_ALLOWED_HOSTS'],
    [{ NG_ALLOWED_HOSTS: 'shop.example,,' }, 'NG_ALLOWED_HOSTS'],
    [{ NG_ALLOWED_HOSTS: 'shop.example/path' }, 'NG_ALLOWED_HOSTS'],
    [{ RENDER_TIMEOUT_MS: '0' }, 'RENDER_TIMEOUT_MS'],
    [{ MAX_CONCURRENT_RENDERS: 'many' }, 'MAX_CONCURRENT_RENDERS'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ RENDER_INPUTS_STRICT: 'strict' }, 'RENDER_INPUTS_STRICT'],
    [{ DATA_CACHE_BYTES: '-1' }, 'DATA_CACHE_BYTES'],
    [{ DATA_CACHE_MAX_ENTRY_BYTES: '0' }, 'DATA_CACHE_MAX_ENTRY_BYTES'],
    [{ DATA_CACHE_HOSTS: 'https://api.example.com' }, 'DATA_CACHE_HOSTS'],
    [{ DATA_CACHE_HOSTS: 'api.example.com,,' }, 'DATA_CACHE_HOSTS'],
    [{ FAST_PATH: 'fast' }, 'FAST_PATH'],
    [{ CRITICAL_CSS: 'fast' }, 'CRITICAL_CSS'],
    [{ RENDER_ENGINE: 'fast' }, 'RENDER_ENGINE'],
    [{ RENDER_ENGINE: 'App' }, 'RENDER_ENGINE'],
    // Angular's engine always inlines the build's plans.
    [{ RENDER_ENGINE: 'app', CRITICAL_CSS: 'per-request' }, 'CRITICAL_CSS'],
    [{ RENDER_ENGINE: 'app', CRITICAL_CSS: 'off' }, 'CRITICAL_CSS'],
    [{ STATIC_MEMORY_BYTES: '-5' }, 'STATIC_MEMORY_BYTES'],
    [{ RENDER_CACHE_ADMISSION: 'third' }, 'RENDER_CACHE_ADMISSION'],
    [{ RENDER_CACHE_ADMISSION: 'Second' }, 'RENDER_CACHE_ADMISSION'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RENDER_CACHE_BYTES: '64M' }, 'RENDER_CACHE_BYTES'],
    [{ DRAIN_WINDOW_MS: '3s' }, 'DRAIN_WINDOW_MS'],
    [{ DRAIN_WINDOW_MS: '-1' }, 'DRAIN_WINDOW_MS'],
    [{ DRAIN_WINDOW_MS: '600001' }, 'DRAIN_WINDOW_MS'],
    [{ WORKERS: 'many' }, 'WORKERS'],
    [{ WORKERS: '0' }, 'WORKERS'],
    [{ WORKERS: '1.5' }, 'WORKERS'],
    [{ WORKERS: '-2' }, 'WORKERS'],
    [{ WORKERS: '5000' }, 'WORKERS'],
    [{ WORKERS: 'AUTO' }, 'WORKERS'],
    [{ MAX_REQUESTS: 'many' }, 'MAX_REQUESTS'],
    [{ MAX_REQUESTS: '-1' }, 'MAX_REQUESTS'],
    [{ MAX_REQUESTS: '1e4' }, 'MAX_REQUESTS'],
    [{ MAX_REQUESTS: '400', MAX_REQUESTS_JITTER: '10%' }, 'MAX_REQUESTS_JITTER'],
    // A jitter alone would recycle nothing: refused rather than ignored.
    [{ MAX_REQUESTS_JITTER: '50' }, 'MAX_REQUESTS_JITTER'],
    [{ MAX_REQUESTS: '0', MAX_REQUESTS_JITTER: '50' }, 'MAX_REQUESTS_JITTER'],
    [{ MAX_RSS_MB: '1G' }, 'MAX_RSS_MB'],
    [{ MAX_RSS_MB: '600MB' }, 'MAX_RSS_MB'],
    // Below any worker's size once started: each worker would be replaced as soon as it started.
    [{ MAX_RSS_MB: '32' }, 'MAX_RSS_MB'],
    [{ MAX_RSS_MB: '-512' }, 'MAX_RSS_MB'],
    [{ CSP: 'on' }, 'CSP'],
    [{ CSP_DIRECTIVES: "img-src 'self'" }, 'CSP_DIRECTIVES'],
    [{ CSP: 'strict', CSP_DIRECTIVES: 'img-src a.example,b.example' }, 'CSP_DIRECTIVES'],
    [{ CSP: 'strict', CSP_DIRECTIVES: "script-src 'nonce-chosen'" }, 'CSP_DIRECTIVES'],
    [{ CSP: 'report-only', CSP_DIRECTIVES: 'img_src *' }, 'CSP_DIRECTIVES'],
    [{ CSP_REPORT_TO: '/csp-reports' }, 'CSP_REPORT_TO'],
    [{ CSP: 'strict', CSP_REPORT_TO: 'https://reports.example/csp", evil="x' }, 'CSP_REPORT_TO'],
    [{ CSP: 'strict', CSP_REPORT_TO: 'ftp://reports.example/csp' }, 'CSP_REPORT_TO'],
    [{ CSP: 'report-only', CSP_REPORT_TO: 'reports' }, 'CSP_REPORT_TO'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'http://cache.internal:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://user:hunter2@' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://cache', REDIS_TIMEOUT_MS: '0' }, 'REDIS_TIMEOUT_MS'],
    [{ REDIS_URL: 'redis://cache', REDIS_KEY_PREFIX: 'a b' }, 'REDIS_KEY_PREFIX'],
    [
      { REDIS_URL: 'redis://cache', SHARED_CACHE_MAX_ENTRY_BYTES: '1MB' },
      'SHARED_CACHE_MAX_ENTRY_BYTES',
    ],
    [{ REVALIDATE_TOKEN: 'short-secret' }, 'REVALIDATE_TOKEN'],
    [{ REVALIDATE_TOKEN: `${'x'.repeat(32)} y` }, 'REVALIDATE_TOKEN'],
    [{ CACHE_GROUP_ALIASES: 'surrogate-keys' }, 'CACHE_GROUP_ALIASES'],
    [{ CACHE_GROUP_ALIASES: 'cache-tag,' }, 'CACHE_GROUP_ALIASES'],
    [{ CDN_PURGE_URL: 'https://api.cdn.example/purge' }, 'CDN_PURGE_URL'],
    [{ CDN_PURGE_URL: 'ftp://api.cdn.example/purge/{group}' }, 'CDN_PURGE_URL'],
    [{ CDN_PURGE_URL: 'https://api.cdn.example/{group}{path}' }, 'CDN_PURGE_URL'],
    [{ CDN_PURGE_URL: '/purge/{group}' }, 'CDN_PURGE_URL'],
    [{ CDN_PURGE_TOKEN: 'secret' }, 'CDN_PURGE_TOKEN'],
    [
      { CDN_PURGE_URL: 'https://api.cdn.example/{group}', CDN_PURGE_METHOD: 'purge' },
      'CDN_PURGE_METHOD',
    ],
    [
      { CDN_PURGE_URL: 'https://api.cdn.example/{group}', CDN_PURGE_TOKEN_HEADER: 'Fastly-Key' },
      'CDN_PURGE_TOKEN_HEADER',
    ],
    [
      {
        CDN_PURGE_URL: 'https://api.cdn.example/{group}',
        CDN_PURGE_TOKEN: 'secret',
        CDN_PURGE_TOKEN_HEADER: 'Fastly Key',
      },
      'CDN_PURGE_TOKEN_HEADER',
    ],
    [{ METRICS_PORT: 'abc' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '-1' }, 'METRICS_PORT'],
    [{ PORT: '4567', METRICS_PORT: '4567' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '0', METRICS_HOST: 'not a host' }, 'METRICS_HOST'],
    [{ METRICS_HOST: '127.0.0.1' }, 'METRICS_HOST'],
  ];
  for (const [env, name] of bad) {
    it(`stops with a one-line message naming ${name} for ${JSON.stringify(env)}`, async () => {
      const { code, stdout, stderr } = await runOriginExpectingExit(env);
      assert.equal(code, 1);
      assert.equal(stdout, '');
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
      assert.match(lines[0], new RegExp(`^Cannot start: ${name} `));
      assert.doesNotMatch(stderr, /hunter2/, 'a password in a URL is never printed');
    });
  }

  it('never repeats a REVALIDATE_TOKEN it refuses, only its length', async () => {
    const { stderr } = await runOriginExpectingExit({ REVALIDATE_TOKEN: 'too-short-secret' });
    assert.equal(
      stderr.trim(),
      'Cannot start: REVALIDATE_TOKEN must be at least 32 characters (e.g. openssl rand -hex 32), got 16',
    );
  });

  it('stops with a one-line message when the port is taken', async () => {
    const origin = await startOrigin();
    try {
      const { code, stderr } = await runOriginExpectingExit({ PORT: String(origin.port) });
      assert.equal(code, 1);
      assert.equal(stderr.trim(), `Cannot start: port ${origin.port} is in use`);
    } finally {
      await origin.stop();
    }
  });
});

describe('serving options', () => {
  it('serves the same answers with every file from disk (STATIC_MEMORY_BYTES=0)', async () => {
    const [memory, disk] = await Promise.all([
      startOrigin(),
      startOrigin({ env: { STATIC_MEMORY_BYTES: '0' } }),
    ]);
    try {
      for (const path of ['/', '/favicon.ico', '/dashboard', '/missing.js']) {
        const [a, b] = await Promise.all([request(memory.url, path), request(disk.url, path)]);
        assert.equal(b.status, a.status, path);
        assert.deepEqual(b.body, a.body, path);
        assert.equal(b.headers['content-type'], a.headers['content-type'], path);
        assert.equal(b.headers['cache-control'], a.headers['cache-control'], path);
        const etag = b.headers.etag;
        if (etag) {
          assert.equal(
            (await request(disk.url, path, { headers: { 'if-none-match': etag } })).status,
            304,
            path,
          );
        }
      }
    } finally {
      await Promise.all([memory.stop(), disk.stop()]);
    }
  });

  // Angular's engine has no such modes: it refuses them at startup (the bad values above).
  for (const mode of ENGINE === 'common' ? ['per-request', 'off'] : []) {
    it(`renders pages with CRITICAL_CSS=${mode}`, async () => {
      const origin = await startOrigin({ env: { CRITICAL_CSS: mode } });
      try {
        const res = await request(origin.url, '/products/4');
        assert.equal(res.status, 200);
        assert.ok(res.text.includes('<h1>'), 'no page');
        assert.equal(
          /<style>[^<]*--fixture-accent/.test(res.text),
          mode !== 'off',
          'critical CSS inlined or not as configured',
        );
      } finally {
        await origin.stop();
      }
    });
  }

  it('says in /healthz which engine renders (RENDER_ENGINE, common by default)', async () => {
    const origin = await startOrigin();
    try {
      const health = JSON.parse((await request(origin.url, '/healthz')).text);
      assert.equal(health.engine, ENGINE);
    } finally {
      await origin.stop();
    }
  });
});
