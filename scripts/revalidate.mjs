// `npm run revalidate -- --group product-42 [--group …] [--path /x …] [--hard] [--url http://127.0.0.1:4000]`
// Asks a running origin to revalidate pages by group and/or path (POST /_origin/revalidate), with
// the token from REVALIDATE_TOKEN, and prints its report. Exits 1 with a one-line reason when the
// origin refuses or cannot be reached, or when the CDN purge or a channel reported a failure.
// Node's modules only: ng add brings this file alone.
import { parseArgs } from 'node:util';

const USAGE =
  'usage: npm run revalidate -- [--group NAME …] [--path /PATH …] [--hard] [--url http://127.0.0.1:4000]\n' +
  '       (the token comes from REVALIDATE_TOKEN)';

function fail(message) {
  process.stderr.write(`revalidate: ${message}\n`);
  process.exit(1);
}

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      group: { type: 'string', multiple: true, default: [] },
      path: { type: 'string', multiple: true, default: [] },
      hard: { type: 'boolean', default: false },
      url: { type: 'string', default: `http://127.0.0.1:${process.env['PORT'] || 4000}` },
      help: { type: 'boolean', default: false },
    },
  }));
} catch (error) {
  fail(`${error.message}\n${USAGE}`);
}
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const token = process.env['REVALIDATE_TOKEN'];
if (!token) {
  fail('REVALIDATE_TOKEN is not set: it must be the token the origin was started with');
}
if (options.group.length + options.path.length === 0) {
  fail(`nothing to revalidate: give --group or --path\n${USAGE}`);
}

let endpoint;
try {
  endpoint = new URL('/_origin/revalidate', options.url);
} catch {
  fail(`--url must be the origin's address such as http://127.0.0.1:4000, got "${options.url}"`);
}

const body = {
  ...(options.path.length > 0 ? { paths: options.path } : {}),
  ...(options.group.length > 0 ? { groups: options.group } : {}),
  mode: options.hard ? 'hard' : 'soft',
};
let response;
try {
  response = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
} catch (error) {
  fail(`cannot reach ${endpoint}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
}
const text = await response.text();
let report;
try {
  report = JSON.parse(text);
} catch {
  report = undefined;
}
if (
  response.status === 404 ||
  (response.status === 405 && response.headers.get('allow') !== 'POST')
) {
  // Without REVALIDATE_TOKEN the endpoint does not exist: the path is one of the app's pages.
  fail(
    `${endpoint} is not the revalidate endpoint (${response.status}): is REVALIDATE_TOKEN set where the origin runs?`,
  );
}
if (!response.ok) {
  fail(`${endpoint} answered ${response.status}: ${report?.error ?? text.slice(0, 200)}`);
}
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
const failedChannels = (report.channels ?? []).filter((channel) => !channel.ok);
if (failedChannels.length > 0 || report.cdn?.ok === false) {
  fail(
    [
      ...failedChannels.map((channel) => `channel ${channel.name} failed: ${channel.error}`),
      ...(report.cdn?.ok === false
        ? [`the CDN purge failed for ${report.cdn.failed.length} item(s)`]
        : []),
    ].join('; '),
  );
}
