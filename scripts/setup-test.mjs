// `npm run setup:test`: installs what the tests need and npm cannot (Debian's chromium,
// redis-server, varnish and varnish-modules). Playwright's browser download and Redis builds from source cannot work on machines
// without general internet access; apt-get's mirror usually can.
import { ensureInstalled } from './lib/debian-packages.mjs';

process.exitCode = ensureInstalled(['chromium', 'redis-server', 'varnish', 'varnish-modules']);
