// Debian's Chromium driven by playwright-core (Playwright's own browser download cannot run here),
// for the browser tests and the browser bench alike.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Chromium, headless. `certificate`: trust this self-signed certificate (scripts/lib/tls-certificate.mjs)
 * by its public key, as a valid one: what a 103 Early Hints fetched is then reused (with
 * `--ignore-certificate-errors` instead, Chromium caches nothing from the connection and fetches
 * every hinted file again).
 * @param {{ certificate?: { spki: string } }} [options]
 */
export async function launchBrowser({ certificate } = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: run "npm run setup:test" (or set CHROMIUM_PATH).`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // No sandbox as root; no background networking, which a closed network answers with errors.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(certificate ? [`--ignore-certificate-errors-spki-list=${certificate.spki}`] : []),
    ],
  });
}
