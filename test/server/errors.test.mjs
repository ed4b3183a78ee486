// Failures by name (server/errors.ts): one list in the code and in docs/errors.md, every name the
// origin's code uses declared there, and a refused request counted under its name in /healthz and
// origin_errors_total.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERRORS } from '../../server/errors.ts';
import { health, request, ROOT, startOrigin } from '../helpers/origin.mjs';

const documented = new Set(
  [
    ...readFileSync(join(ROOT, 'docs/errors.md'), 'utf8').matchAll(/^\| `(ORIGIN_[A-Z_]+)` \|/gm),
  ].map(([, code]) => code),
);

describe('failures by name', () => {
  it('docs/errors.md lists exactly the names server/errors.ts declares', () => {
    assert.deepEqual([...documented].sort(), Object.keys(ERRORS).sort());
  });

  it('every name the origin uses is declared', () => {
    const server = join(ROOT, 'server');
    const used = new Set();
    for (const name of readdirSync(server, { recursive: true })) {
      if (!name.endsWith('.ts')) continue;
      // A name where a failure is named: noted('…'), new OriginError('…', badRequest('…'), a
      // `code = '…'` field, or an argument on a line of its own (throttledWarning's).
      const text = readFileSync(join(server, name), 'utf8');
      for (const [, code] of text.matchAll(
        /(?:noted\(|OriginError\(\s*|badRequest\(|code = |^\s*)'(ORIGIN_[A-Z_]+)'(?=[,)]|\s*$)/gm,
      )) {
        used.add(code);
      }
    }
    const unknown = [...used].filter((code) => !(code in ERRORS));
    assert.deepEqual(unknown, []);
    assert.ok(used.size >= 20, `${used.size} names used`);
  });

  describe('through the origin', () => {
    let origin;
    before(async () => {
      origin = await startOrigin({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } });
    });
    after(() => origin?.stop());

    it('counts a refused request under its name, and answers it without a stack', async () => {
      const refused = await request(origin.url, '/', { headers: { host: 'evil.example' } });
      assert.equal(refused.status, 400);
      assert.equal(refused.text, 'Bad Request: host not allowed');
      const unsafe = await request(origin.url, '/a/%2e%2e/b');
      assert.equal(unsafe.status, 400);
      const { errors } = await health(origin);
      assert.equal(errors.ORIGIN_HOST_REJECTED, 1);
      assert.equal(errors.ORIGIN_TARGET_UNSAFE, 1);
      const metricsUrl = /Metrics on (http:\/\/[^\s"]+)\/metrics/.exec(origin.stdout())[1];
      const text = (await request(metricsUrl, '/metrics')).text;
      assert.match(text, /^origin_errors_total\{code="ORIGIN_HOST_REJECTED"\} 1$/m);
    });
  });
});
