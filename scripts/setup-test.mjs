// `npm run setup:test`: installs what the tests need and npm cannot (Debian's chromium,
// redis-server, varnish and varnish-modules; an OpenTelemetry Collector built from the Go module
// proxy). Playwright's browser download and Redis builds from source cannot work on machines
// without general internet access; apt-get's mirror and the Go module proxy usually can.
import { ensureInstalled } from './lib/debian-packages.mjs';
import { ensureCollector } from './lib/otel-collector.mjs';

const packages = ensureInstalled(['chromium', 'redis-server', 'varnish', 'varnish-modules']);
process.exitCode = packages === 0 ? ensureCollector() : packages;
