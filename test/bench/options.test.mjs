// `npm run bench` flags that choose where the servers and the load run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseOptions } from '../../bench/lib/options.mjs';
import {
  addBaseline,
  DEFAULT_VARIANT_NAMES,
  getVariant,
  VARIANTS,
  variantEnv,
} from '../../bench/lib/variants.mjs';
import { NODE_FLAGS } from '../../scripts/lib/node-flags.mjs';

test('servers on CPU 1 and the load on CPU 0 unless told otherwise', () => {
  const options = parseOptions([]);
  assert.equal(options.serverCpus, '1');
  assert.equal(options.loadCpus, '0');
  assert.equal(options.serverCpuCount, 1);
});

test('takes taskset CPU lists and counts the server CPUs', () => {
  const options = parseOptions(['--server-cpus', '0-5,8', '--load-cpus', '6,7']);
  assert.equal(options.serverCpus, '0-5,8');
  assert.equal(options.serverCpuCount, 7);
});

test('refuses malformed lists and lists that share a CPU, naming the flag', () => {
  for (const bad of ['', 'a', '3-1', '1-', '1,,2', '-1', '1 2']) {
    assert.throws(
      () => parseOptions([`--server-cpus=${bad}`]),
      /--server-cpus must be a CPU list/,
      JSON.stringify(bad),
    );
  }
  assert.throws(() => parseOptions(['--server-cpus', '0-3', '--load-cpus', '3-4']), /share CPU 3/);
});

test('origin-cluster runs one worker per server CPU, and at least 2', () => {
  const cluster = getVariant('origin-cluster');
  assert.equal(variantEnv(cluster, 1).WORKERS, '2');
  assert.equal(variantEnv(cluster, 6).WORKERS, '6');
  assert.equal(variantEnv(getVariant('origin'), 6).WORKERS, undefined);
});

test('origin-nocache is the origin with its render cache off, in the default run', () => {
  const nocache = getVariant('origin-nocache');
  assert.equal(nocache.env.RENDER_CACHE_BYTES, '0');
  assert.deepEqual(nocache.command(), getVariant('origin').command());
  assert.equal(getVariant('origin').env.RENDER_CACHE_BYTES, undefined);
  assert.ok(DEFAULT_VARIANT_NAMES.includes('origin-nocache'));
});

test('origin-app is the origin rendering through AngularNodeAppEngine, in the default run', () => {
  const app = getVariant('origin-app');
  assert.equal(app.env.RENDER_ENGINE, 'app');
  assert.deepEqual(app.command(), getVariant('origin').command());
  assert.equal(getVariant('origin').env.RENDER_ENGINE, undefined);
  assert.ok(DEFAULT_VARIANT_NAMES.includes('origin-app'));
});

test("every Node variant runs with the origin's Node flags, and no Bun one", () => {
  for (const variant of VARIANTS) {
    const flags = variant.command().slice(1, 1 + NODE_FLAGS.length);
    if (variant.runtime === 'node') assert.deepEqual(flags, NODE_FLAGS, variant.name);
    else assert.notDeepEqual(flags, NODE_FLAGS, variant.name);
  }
});

test('--baseline adds the origin of another build, run as the origin is, after the variants asked for', () => {
  const options = parseOptions(['--variants', 'origin,ceiling', '--baseline', '/tmp/main-build']);
  assert.deepEqual(options.variants, ['origin', 'ceiling', 'baseline']);
  assert.equal(options.baseline, '/tmp/main-build');
  assert.deepEqual(parseOptions(['--variants', 'origin']).variants, ['origin']);
  addBaseline(options.baseline);
  const baseline = getVariant('baseline');
  const origin = getVariant('origin');
  assert.deepEqual(baseline.command(), [
    ...origin.command().slice(0, -1),
    '/tmp/main-build/server/server.mjs',
  ]);
  assert.deepEqual(baseline.env, origin.env);
  assert.equal(baseline.dist, '/tmp/main-build');
});
