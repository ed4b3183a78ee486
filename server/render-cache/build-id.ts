import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An id of the build, for the shared tier's keys: during a rolling deploy old and new pods share a
 * Redis but never each other's pages. The client shell names the browser build's hashed bundles,
 * the server index its stylesheets, and the server bundle's entry its hashed chunks: a change to the
 * app changes one of them (a chunk's name carries the hashes of the chunks it imports). A localized
 * build has these per locale: its id covers every locale's (a changed translation changes it).
 */
export function buildId(apps: readonly { browserDir: string; serverDir: string }[]): string {
  const hash = createHash('sha256');
  for (const { browserDir, serverDir } of apps) {
    for (const file of [
      join(browserDir, 'index.csr.html'),
      join(serverDir, 'index.server.html'),
      join(serverDir, 'main.server.mjs'),
    ]) {
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex').slice(0, 16);
}
