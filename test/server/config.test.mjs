// Configuration from the environment: working defaults, production hosts, one-line errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request, runOriginExpectingExit, startOrigin } from '../helpers/origin.mjs';

describe('configuration', () => {
  it('serves production hosts named in NG_ALLOWED_HOSTS, and no others', async () => {
    const origin = await startOrigin({ env: { NG_ALLOWED_HOSTS: 'shop.example, *.cdn.example' } });
    try {
      const status = async (host) => (await request(origin.url, '/products/3', { headers: { host } })).status;
      assert.equal(await status('shop.example'), 200);
      assert.equal(await status('eu.cdn.example'), 200);
      assert.equal(await status('cdn.example'), 400);
      assert.equal(await status('localhost'), 400, 'defaults must not apply once hosts are configured');
      assert.equal(await status('evil.example'), 400);
    } finally {
      await origin.stop();
    }
  });

  it('listens on PORT and HOST', async () => {
    const origin = await startOrigin({ env: { PORT: '0', HOST: '127.0.0.1' } });
    try {
      const lines = origin.stdout().trim().split('\n').map((line) => JSON.parse(line));
      assert.equal(lines.length, 1);
      assert.equal(lines[0].msg, `SSR origin listening on http://127.0.0.1:${origin.port}`);
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
  ];
  for (const [env, name] of bad) {
    it(`stops with a one-line message naming ${name} for ${JSON.stringify(env)}`, async () => {
      const { code, stdout, stderr } = await runOriginExpectingExit(env);
      assert.equal(code, 1);
      assert.equal(stdout, '');
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, `expected one line, got:\n${stderr}`);
      assert.match(lines[0], new RegExp(`^Cannot start: ${name} `));
    });
  }

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
