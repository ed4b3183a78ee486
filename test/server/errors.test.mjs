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

  it('every name is made somewhere in the origin, by its one maker, and every name made is declared', () => {
    const server = join(ROOT, 'server');
    const made = new Set();
    for (const name of readdirSync(server, { recursive: true })) {
      if (!name.endsWith('.ts') || name === 'errors.ts') continue;
      // The makers (server/errors.ts): new OriginError('…'), super('…') of a subclass of it,
      // report(log, '…'), throttledWarning(log, '…'), errorHappened('…' or a choice of two),
      // messageOf('…'); and the error handler's names for errors of other packages ('…' returned).
      const text = readFileSync(join(server, name), 'utf8');
      for (const [, code] of text.matchAll(
        /(?:new OriginError\(\s*|super\(|report\(\s*[\w.#]+,\s*|throttledWarning\(\s*[\w.#]+,\s*|errorHappened\(\s*(?:[^'()]*\?\s*)?|messageOf\(|return |\? |: )'(ORIGIN_[A-Z_]+)'/g,
      )) {
        made.add(code);
      }
    }
    const undeclared = [...made].filter((code) => !(code in ERRORS));
    assert.deepEqual(undeclared, [], 'made but not declared');
    const unmade = Object.keys(ERRORS).filter((code) => !made.has(code));
    assert.deepEqual(unmade, [], 'declared (and documented) but never made');
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
