// The origin as the tests start it: on the tests' own app build (dist-test/, from test/app) unless
// told otherwise, plus what only tests need (startup failures, raw bytes, the JSON log).
import { connect } from 'node:net';
import { join } from 'node:path';
import { spawnOrigin, startOrigin as startOriginOf } from '../../scripts/lib/origin-process.mjs';
import { APP_DIST, ROOT, TEST_APP_DIST, TEST_APP_I18N_DIST } from '../../scripts/lib/paths.mjs';
import { anyPortSetting } from '../../scripts/lib/ports.mjs';

import { request } from '../../scripts/lib/http.mjs';
import { makeCertificate } from '../../scripts/lib/tls-certificate.mjs';
import { waitFor } from './wait.mjs';

export { request };
export { APP_DIST, ROOT };
/**
 * Whether this run is on the localized build: `npm run test:localized` runs suites that hold on both
 * layouts again with TEST_BUILD=localized, against the tests' app in three locales, asked for under
 * one locale's prefix. The same assertions, so a localized app gets everything a plain one does.
 */
export const LOCALIZED = process.env['TEST_BUILD'] === 'localized';
/** The build the origin's tests run against: the tests' own app (test/app), not the one in src/. */
export const DIST = LOCALIZED ? TEST_APP_I18N_DIST : TEST_APP_DIST;
/**
 * The locale a localized run asks for: not the source locale, so every request crosses a prefix
 * and lands on a bundle other than the first one loaded.
 */
export const LOCALE = LOCALIZED ? 'fr' : undefined;

/** The tests' app's translated words, in the locale under test (test/app/src/locale/messages.fr.xlf). */
export const SAYS = {
  welcome: LOCALE === 'fr' ? 'Bienvenue' : 'Welcome',
  notFound: LOCALE === 'fr' ? 'Page introuvable' : 'Page not found',
};

/** A page or file of the site under test: `/products/1`, or `/fr/products/1` on the localized build. */
export function at(path) {
  return LOCALE === undefined ? path : `/${LOCALE}${path}`;
}

/** Where the site under test's files are in a build (DIST or a copy of it): browser/ and server/, or their `fr/`. */
export function siteDirs(dist = DIST) {
  const subPath = LOCALE ?? '';
  return { browser: join(dist, 'browser', subPath), server: join(dist, 'server', subPath) };
}

/**
 * The engine the origins these tests start render with: RENDER_ENGINE passes from this process's
 * environment to theirs (scripts/each-engine.mjs runs the same files once per engine). Tests
 * assert a documented difference between the engines (docs/choosing-an-engine.md) by this.
 */
export const ENGINE = process.env['RENDER_ENGINE'] || 'common';

/**
 * The options of a suite that runs no engine-specific code (`why`), run under CommonEngine only:
 * each-engine.mjs would run it twice for nothing.
 * @param {string} why
 */
export const onceForBothEngines = (why) => ({
  skip: ENGINE !== 'common' && `${why}: run with RENDER_ENGINE=common`,
});

/**
 * The protocols the origin serves: HTTP/1.1 (plain), and with TLS_CERT and TLS_KEY, HTTP/2 (with
 * HTTP/1.1 over TLS for clients that ask for it). Suites whose behaviour must hold on both run per
 * protocol; `request()` speaks HTTP/2 to an `https://` origin.
 */
export const PROTOCOLS = ['http/1.1', 'h2'];

let certificate;
/** The tests' self-signed certificate for localhost, made once per test process. */
export function testCertificate() {
  if (certificate === undefined) {
    certificate = makeCertificate();
    process.once('exit', certificate.remove);
  }
  return certificate;
}

/**
 * @param {import('../../scripts/lib/origin-process.mjs').OriginOptions & { protocol?: string }} [options]
 * `protocol: 'h2'` starts it with the tests' certificate: HTTPS, HTTP/2.
 */
export function startOrigin({ protocol, ...options } = {}) {
  const env = protocol === 'h2' ? { ...testCertificate().env, ...options.env } : options.env;
  return startOriginOf({ dist: DIST, ...options, env });
}

/** Runs the origin with the given environment (on DIST, or `dist`) until it exits; for startup errors. */
export async function runOriginExpectingExit(env, timeoutMs = 15_000, dist = DIST) {
  const child = spawnOrigin({ env: { PORT: await anyPortSetting(), ...env }, dist });
  const timer = setTimeout(() => child.stop({ graceMs: 0 }), timeoutMs);
  const { code } = await child.exited;
  clearTimeout(timer);
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/**
 * Sends raw bytes over one TCP connection and collects everything until the server closes it:
 * for requests no HTTP client would send (duplicate Host, absolute-form, garbage). `status` and
 * `responses` are the final answers; `interim` the 1xx before them (a page's 103 Early Hints).
 * @returns {Promise<{ status: number, raw: string, responses: string[], interim: string[] }>}
 */
export function rawRequest(port, bytes, { timeoutMs = 10_000, afterWrite } = {}) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no close within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString().slice(0, 300)}`,
        ),
      );
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(bytes);
      afterWrite?.(socket);
    });
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const all = raw.split(/(?=HTTP\/1\.[01] \d{3} )/).filter(Boolean);
      const isInterim = (response) => /^HTTP\/1\.[01] 1\d\d /.test(response);
      const responses = all.filter((response) => !isInterim(response));
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(responses[0] ?? raw)?.[1] ?? 0);
      resolve({ status, raw, responses, interim: all.filter(isInterim) });
    });
  });
}

/** The origin's JSON log lines so far. */
export function logLines(origin) {
  return origin
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/**
 * The first log line `test` accepts, once there (up to 5 s): a request's line is written at its
 * end, which for Koa comes after the body left, so a client may see the answer before the line.
 */
export function logLine(origin, test, what = 'a log line') {
  return waitFor(() => logLines(origin).find(test), {
    what,
    timeoutMs: 5_000,
    seen: () => origin.stdout(),
  });
}

/**
 * Waits (up to 15 s) until `count` cluster workers have said they listen: startOrigin resolves at
 * the first, while the others may still be starting, and the primary hands connections only to
 * workers that listen.
 */
export async function workersListening(origin, count) {
  const listening = () =>
    logLines(origin).filter((line) => line.msg.startsWith('Origin listening')).length;
  await waitFor(() => listening() >= count, {
    what: `${count} workers listening`,
    timeoutMs: 15_000,
    seen: () => `${listening()} of ${count} workers listen:\n${origin.stdout()}`,
  });
}

/**
 * The origin's log line saying it published its build to the asset archive (ASSET_ARCHIVE), once
 * it is there (up to 15 s): it starts serving at once, and tries again while its Redis connection
 * comes up.
 */
export function published(origin) {
  return waitFor(() => logLines(origin).find((line) => /published$/.test(line.msg)), {
    what: 'publication of the build to the archive',
    timeoutMs: 15_000,
    everyMs: 50,
    seen: origin.stdout,
  });
}

/**
 * Sends `signal` to the origin and waits until the fixture preloaded into it that answers it
 * (test/fixtures/clock.mjs, slow-renders.mjs) has printed `line` once more.
 */
export function signalFixture(origin, signal, line, { timeoutMs = 2_000, everyMs = 10 } = {}) {
  const seen = origin.stdout().split(line).length;
  process.kill(origin.pid, signal);
  return waitFor(() => origin.stdout().split(line).length > seen, {
    what: `answer to ${signal} (${line})`,
    timeoutMs,
    everyMs,
    seen: origin.stdout,
  });
}

/** /healthz as JSON (over a new connection: under a cluster, the next worker answers). */
export async function health(origin) {
  return JSON.parse((await request(origin.url, '/healthz')).text);
}

/** Polls /healthz (up to 10 s) until no render runs or waits, background refreshes included. */
export async function rendersIdle(origin) {
  let renders;
  await waitFor(
    async () => {
      ({ renders } = await health(origin));
      return renders.running === 0 && renders.queued === 0 && renders.backgroundQueued === 0;
    },
    {
      what: 'end of the renders',
      timeoutMs: 10_000,
      everyMs: 50,
      seen: () => `/healthz renders: ${JSON.stringify(renders)}`,
    },
  );
}
