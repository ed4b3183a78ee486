// `npm run setup:test` and `setup:browser` (scripts/setup-test.mjs, scripts/setup-browser.mjs): what
// they do when the programs are there, and the message when they are not and apt-get is missing.
// The install itself needs root and a Debian mirror, so it runs in CI (`.ci/run`), not here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');

/** Runs a setup script with `env` on top of a PATH that holds no apt-get (nor sudo). */
function setup(script, env) {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', script)], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PATH: '/nonexistent', ...env },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('setup:test', () => {
  it('finds what is there and installs nothing', () => {
    // Any existing file stands in for the programs: the script only checks that they exist.
    const { code, output } = setup('setup-test.mjs', {
      CHROMIUM_PATH: process.execPath,
      REDIS_SERVER_PATH: process.execPath,
      VARNISHD_PATH: process.execPath,
      VARNISH_XKEY_PATH: process.execPath,
      OTELCOL_PATH: process.execPath,
    });
    assert.equal(code, 0, output);
    assert.match(
      output,
      /Found chromium: .*\nFound redis-server: .*\nFound varnish: .*\nFound varnish-modules: .*\nFound the OpenTelemetry Collector: /,
    );
  });

  it('without Go to build the OpenTelemetry Collector, says so in one line and fails', () => {
    const { code, output } = setup('setup-test.mjs', {
      CHROMIUM_PATH: process.execPath,
      REDIS_SERVER_PATH: process.execPath,
      VARNISHD_PATH: process.execPath,
      VARNISH_XKEY_PATH: process.execPath,
      OTELCOL_PATH: '/nonexistent/otelcol',
    });
    assert.equal(code, 1);
    const lines = output.trim().split('\n');
    assert.match(lines.at(-1), /^No Go here: install Go .*, or set OTELCOL_PATH/);
    assert.equal(lines.filter((line) => /Go/.test(line)).length, 1, output);
  });

  it('without apt-get, names what to install and the variable to set, and fails', () => {
    const { code, output } = setup('setup-test.mjs', {
      CHROMIUM_PATH: process.execPath,
      REDIS_SERVER_PATH: '/nonexistent/redis-server',
      VARNISHD_PATH: process.execPath,
      VARNISH_XKEY_PATH: process.execPath,
    });
    assert.equal(code, 1);
    assert.match(
      output,
      /No apt-get here: install redis-server \(.*\), then set REDIS_SERVER_PATH/,
    );
    assert.doesNotMatch(output, /install chromium/, 'only what is missing');
  });

  it('setup:browser checks Chromium alone', () => {
    const found = setup('setup-browser.mjs', {
      CHROMIUM_PATH: process.execPath,
      REDIS_SERVER_PATH: '/nonexistent/redis-server',
    });
    assert.equal(found.code, 0, found.output);
    assert.doesNotMatch(found.output, /redis/);
    const missing = setup('setup-browser.mjs', { CHROMIUM_PATH: '/nonexistent/chromium' });
    assert.equal(missing.code, 1);
    assert.match(missing.output, /install chromium .*then set CHROMIUM_PATH/);
  });

  it("is what the README's test command and .ci/run run, the same commands", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const command = /^npm ci && npm run setup:test && npm test$/m.exec(readme)?.[0];
    assert.ok(command, "the README's test command installs with setup:test");
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('npm '));
    assert.deepEqual(ci, command.split(' && '));
  });
});
