// Measures what a rolling deploy behind the shipped Varnish costs the requests in flight: the tests'
// app origins on three loopback ports behind deploy/varnish/default.vcl, two serving, replaced one
// at a time under load (scripts/lib/rolling-deploy.mjs; test/deploy/rolling-deploy.test.mjs asserts
// that none fails with the defaults). On the tests' app (dist-test/, which npm run builds first):
//
//   npm run rolling-deploy -- [--window MS] [--workers N] [--replacements N] [--rate N]
//                             [--no-retry] [--only-gets]
//
// --window sets DRAIN_WINDOW_MS (the origin's default if absent); --no-retry drops the VCL's
// vcl_backend_error, to see what the retry is worth; --only-gets sends GETs where the load has
// POSTs (which the retry never sends twice).
import { parseArgs } from 'node:util';
import { TEST_APP_DIST } from './lib/paths.mjs';
import { rollingDeploy, startReplicas } from './lib/rolling-deploy.mjs';
import { inputsVclOf } from './lib/varnish.mjs';

const { values } = parseArgs({
  options: {
    window: { type: 'string' },
    workers: { type: 'string', default: '1' },
    replacements: { type: 'string', default: '3' },
    rate: { type: 'string', default: '400' },
    'no-retry': { type: 'boolean', default: false },
    'only-gets': { type: 'boolean', default: false },
  },
});

const withoutRetry = (vcl) => {
  const edited = vcl.replace(/^sub vcl_backend_error \{[\s\S]*?^\}\n/m, '');
  if (edited === vcl)
    throw new Error('deploy/varnish/default.vcl has no vcl_backend_error to drop');
  return edited;
};

const fleet = await startReplicas({
  dist: TEST_APP_DIST,
  inputsVcl: await inputsVclOf(TEST_APP_DIST),
  editVcl: values['no-retry'] ? withoutRetry : undefined,
  env: { WORKERS: values.workers, DRAIN_WINDOW_MS: values.window ?? '' },
});
try {
  const load = await rollingDeploy(fleet, {
    replacements: Number(values.replacements),
    tag: `measure-${Date.now()}`,
    onlyGets: values['only-gets'],
    rate: Number(values.rate),
  });
  const failed = load.failed + load.errors + load.timeouts;
  console.log(
    `DRAIN_WINDOW_MS=${values.window ?? '(default)'} WORKERS=${values.workers} retry=${values['no-retry'] ? 'off' : 'on'}${values['only-gets'] ? ' GETs only' : ''}: ` +
      `${load.answered + failed} requests, ${failed} failed (${((100 * failed) / (load.answered + failed)).toFixed(2)}%) ` +
      `during ${values.replacements} replacements; statuses ${JSON.stringify(load.statuses)}, ${load.errors} errors, ` +
      `${load.timeouts} timeouts; exit codes ${load.exits.join(' ')}`,
  );
} finally {
  await fleet.stop();
}
