// `npm run setup:browser`: Chromium only (driven by playwright-core), for the browser tests on their
// own. `npm run setup:test` installs it with everything else the tests need.
import { ensureInstalled } from './lib/debian-packages.mjs';

process.exitCode = ensureInstalled(['chromium']);
