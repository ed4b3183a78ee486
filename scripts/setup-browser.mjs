// Installs what the browser tests need and npm cannot: Debian's chromium (driven by playwright-core).
// Playwright's own browser download cannot work on machines without general internet access.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

if (existsSync(CHROMIUM)) {
  console.log(`Browser found: ${CHROMIUM}`);
  process.exit(0);
}
const asRoot = process.getuid?.() === 0 ? [] : ['sudo'];
const run = (args) => {
  const [command, ...rest] = [...asRoot, ...args];
  const result = spawnSync(command, rest, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) {
    console.error(
      `Could not install chromium (${args.join(' ')} failed). Install it yourself or set CHROMIUM_PATH.`,
    );
    process.exit(1);
  }
};
try {
  execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
} catch {
  console.error(
    'No apt-get here: install Chromium yourself and set CHROMIUM_PATH to its executable.',
  );
  process.exit(1);
}
run(['apt-get', 'update', '-qq']);
run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium']);
console.log(`Browser installed: ${CHROMIUM}`);
