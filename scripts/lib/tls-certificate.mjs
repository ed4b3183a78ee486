// A self-signed certificate for localhost and 127.0.0.1, made with openssl when asked, in a
// temporary folder: the origin's TLS_CERT and TLS_KEY in the tests and the browser bench.
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `env` sets the origin's TLS; its Node is not told to trust the certificate, as no production Node
 * trusts one for 127.0.0.1: renders reach the app's own API without TLS (the origin's private
 * listener, server/process/api-listener.ts). `spki` is the certificate's public key hash for
 * Chromium's `--ignore-certificate-errors-spki-list`: with it Chromium trusts this certificate as valid, where
 * `--ignore-certificate-errors` leaves the connection marked as broken, and Chromium then neither
 * caches its answers nor reuses what a 103 Early Hints fetched (seen: every hinted file fetched twice).
 * @returns {{ cert: string, key: string, spki: string, env: { TLS_CERT: string, TLS_KEY: string }, remove: () => void }}
 */
export function makeCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'origin-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  const publicKey = new X509Certificate(readFileSync(cert)).publicKey.export({
    type: 'spki',
    format: 'der',
  });
  return {
    cert,
    key,
    spki: createHash('sha256').update(publicKey).digest('base64'),
    env: { TLS_CERT: cert, TLS_KEY: key },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
