// `npm start` runs `ng serve` as npm's own child (exec), so stopping npm stops the dev server: a
// SIGTERM to npm (an IDE's stop button, a process manager) must not leave it listening. Before
// that, it renders a page per request through the origin's handler (server.ts reqHandler), as
// the production origin does: the origin's code must load under Vite's dev server too.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readLoadPaths } from '../../scripts/lib/load-paths.mjs';
import { freePort } from '../../scripts/lib/ports.mjs';
import { ROOT } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

/** Whether something accepts connections on the port. */
const listening = (port) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * Where `ng serve` serves a page of load-paths.json: Angular's dev server builds a localized app
 * (`"localize": true`) in its source locale at the root ("only supports localizing a single
 * locale per build"), so a path under the source locale's prefix loses it.
 */
function devPath(path) {
  const { projects } = JSON.parse(readFileSync(join(ROOT, 'angular.json'), 'utf8'));
  const app = Object.values(projects).find((project) => project.sourceRoot === 'src');
  const source = app?.i18n?.sourceLocale;
  if (!app?.architect?.build?.options?.localize || source === undefined) return path;
  const prefix = `/${typeof source === 'string' ? source : (source.subPath ?? source.code)}`;
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path;
}

let npm;
after(() => {
  // Whatever happened, leave nothing running: the whole process group.
  if (npm?.pid) {
    try {
      process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('npm start', () => {
  it(
    'renders a page for a request, then stops when npm gets SIGTERM',
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      let output = '';
      npm = spawn('npm', ['start', '--', '--port', String(port), '--host', '127.0.0.1'], {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      npm.stdout.on('data', (chunk) => (output += chunk));
      npm.stderr.on('data', (chunk) => (output += chunk));
      const exited = new Promise((resolve) =>
        npm.once('exit', (code, signal) => resolve({ code, signal })),
      );
      await waitFor(() => listening(port), {
        what: `ng serve listening on ${port}`,
        timeoutMs: 90_000,
        everyMs: 200,
        seen: () => output,
      });
      // A page rendered per request (load-paths.json), or the not-found page of an app with none.
      const { rendered, notFound } = readLoadPaths();
      const path = devPath(rendered ? rendered.at(0) : notFound);
      let page;
      await waitFor(
        async () => {
          page = await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined);
          return page !== undefined && page.status !== 503;
        },
        { what: `answer from ng serve to ${path}`, timeoutMs: 60_000, everyMs: 200 },
      );
      const html = await page.text();
      assert.equal(
        page.status,
        rendered ? rendered.status : 404,
        `${path}:\n${output.slice(-3000)}`,
      );
      assert.match(html, /ng-server-context="ssr"/, `${path} was not rendered on the server`);
      npm.kill('SIGTERM');
      await exited;
      await waitFor(async () => !(await listening(port)), {
        what: `closed port ${port} after npm exited`,
        timeoutMs: 10_000,
        everyMs: 200,
        seen: () => 'the port is still open: ng serve was left running',
      });
    },
  );
});
