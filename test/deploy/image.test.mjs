// No container engine runs here, so this performs the Dockerfile's runtime stage itself, step by
// step as written, in a clean temporary folder: COPY from the context (and dist/ from the build),
// RUN (the production install, which applies patches/), ENV, then the CMD, and the HEALTHCHECK
// against it. If the production install lacks a package or cannot apply a patch, this fails.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NODE_FLAGS } from '../../scripts/lib/node-flags.mjs';
import { startCollector } from '../../scripts/lib/otel-collector.mjs';
import { anyPortSetting } from '../../scripts/lib/ports.mjs';
import { DIST, ROOT, request } from '../helpers/origin.mjs';
import { waitFor } from '../helpers/wait.mjs';

/** The instructions of the Dockerfile's stage named `stage`, continuation lines joined. */
function stageInstructions(stage) {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, '');
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const start = lines.findIndex((line) => new RegExp(`^FROM \\S+ AS ${stage}$`, 'i').test(line));
  assert.ok(start >= 0, `no stage ${stage}`);
  const end = lines.findIndex((line, i) => i > start && /^FROM /i.test(line));
  return lines.slice(start + 1, end === -1 ? undefined : end).map((line) => {
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(line);
    return { keyword: keyword.toUpperCase(), rest };
  });
}

describe('the production image (Dockerfile, runtime stage)', () => {
  const app = mkdtempSync(join(tmpdir(), 'image-'));
  const env = {};
  let cmd;
  let healthcheck;
  let server;
  let url;

  before(async () => {
    for (const { keyword, rest } of stageInstructions('runtime')) {
      if (keyword === 'COPY') {
        const parts = rest.split(/\s+/);
        const stage = parts[0].startsWith('--from=')
          ? parts.shift().slice('--from='.length)
          : undefined;
        const destination = parts.pop();
        // Several sources, or a destination ending in '/', copy into that folder (Docker's rule).
        const intoFolder = parts.length > 1 || destination.endsWith('/');
        for (const source of parts) {
          // The build stage built in /app: its dist/ is here the build of the origin's test app, so
          // this proves the image with any app in src/.
          const from =
            stage === 'build'
              ? source.replace(/\/$/, '') === '/app/dist'
                ? DIST
                : join(ROOT, source.replace(/^\/app\//, ''))
              : join(ROOT, source);
          cpSync(
            from,
            intoFolder ? join(app, destination, basename(source)) : join(app, destination),
            { recursive: true },
          );
        }
      } else if (keyword === 'RUN') {
        const command = rest.replace(/--mount=\S+\s+/g, '');
        const result = spawnSync('sh', ['-c', command], {
          cwd: app,
          env: { ...process.env, ...env },
          encoding: 'utf8',
          timeout: 300_000,
        });
        assert.equal(result.status, 0, `RUN ${command}\n${result.stdout}\n${result.stderr}`);
      } else if (keyword === 'ENV') {
        for (const [, name, value] of rest.matchAll(/(\w+)=(\S+)/g)) env[name] = value;
      } else if (keyword === 'CMD') {
        cmd = JSON.parse(rest);
      } else if (keyword === 'HEALTHCHECK') {
        healthcheck = JSON.parse(rest.replace(/^(--\S+\s+)*CMD\s+/, ''));
      }
    }
    assert.deepEqual(
      cmd,
      ['node', ...NODE_FLAGS, 'dist/server/server.mjs'],
      "the server itself is the command (PID 1), with the origin's Node flags",
    );
    // The image's node is Node 24, as this one; loopback and a free port instead of 4000.
    server = spawn(process.execPath, cmd.slice(1), {
      cwd: app,
      env: { ...env, PATH: process.env.PATH, PORT: await anyPortSetting(), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    url = await listening(server, () => output);
  });
  after(() => {
    server?.kill('SIGTERM');
    rmSync(app, { recursive: true, force: true });
  });

  it('installs production dependencies only, with the patches applied', () => {
    const installed = readdirSync(join(app, 'node_modules'));
    for (const dev of ['@angular', 'koa', 'lru-cache', 'pino'])
      assert.ok(installed.includes(dev), `${dev} missing`);
    for (const dev of [
      'autocannon',
      'fastify',
      'express',
      'bun',
      'playwright-core',
      'typescript',
      'node',
    ]) {
      assert.ok(!installed.includes(dev), `${dev} is a dev dependency, yet in the image`);
    }
    for (const patch of readdirSync(join(ROOT, 'patches')).filter((name) =>
      name.endsWith('.patch'),
    )) {
      // `patch --dry-run --reverse` succeeds only if the patch is applied.
      execFileSync('patch', [
        '--dry-run',
        '--reverse',
        '--strip=1',
        '--silent',
        `--directory=${app}`,
        `--input=${join(ROOT, 'patches', patch)}`,
      ]);
    }
  });

  it('serves the prerendered page, an SSR page and an asset with the origin headers', async () => {
    const home = await request(url, '/');
    assert.equal(home.status, 200);
    assert.equal(home.headers['cache-control'], 'no-cache');
    assert.match(home.headers.etag, /^"/);
    const product = await request(url, '/products/5');
    assert.equal(product.status, 200);
    assert.match(product.text, /<h1>/);
    assert.match(product.headers['cache-status'], /render-cache/);
    const mainJs = readdirSync(join(app, 'dist/browser')).find((name) =>
      /^main-.+\.js$/.test(name),
    );
    const asset = await request(url, `/${mainJs}`);
    assert.equal(asset.status, 200);
    assert.equal(asset.headers['cache-control'], 'max-age=31536000, immutable');
    assert.equal(asset.headers['x-powered-by'], undefined);
  });

  it('traces with OTEL_EXPORTER_OTLP_ENDPOINT alone: its production install holds the SDK, no loader flag', async () => {
    const collector = await startCollector();
    const traced = spawn(process.execPath, cmd.slice(1), {
      cwd: app,
      env: {
        ...env,
        PATH: process.env.PATH,
        PORT: await anyPortSetting(),
        HOST: '127.0.0.1',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    traced.stdout.on('data', (chunk) => (output += chunk));
    traced.stderr.on('data', (chunk) => (output += chunk));
    try {
      const tracedUrl = await listening(traced, () => output);
      assert.equal((await request(tracedUrl, '/products/6')).status, 200);
      await waitFor(() => collector.spans().some((span) => span.name === 'GET /products/:id'), {
        what: 'span GET /products/:id at the collector',
        timeoutMs: 10_000,
        everyMs: 50,
        seen: () =>
          `${collector
            .spans()
            .map((span) => span.name)
            .join(', ')}\n${output}`,
      });
    } finally {
      traced.kill('SIGTERM');
      await collector.stop();
    }
  });

  it('passes its own HEALTHCHECK', () => {
    const port = new URL(url).port;
    const [executable, ...args] = healthcheck;
    assert.equal(executable, 'node');
    const result = spawnSync(process.execPath, args, {
      env: { ...process.env, PORT: port },
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(result.status, 0, result.stderr);
  });
});

/** The URL the origin says it listens on (within 20 s), or its output when it exits first. */
function listening(server, output) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start in 20 s:\n${output()}`)), 20_000);
    server.stdout.on('data', () => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    server.once('exit', (code) => reject(new Error(`exited ${code}:\n${output()}`)));
  });
}

describe('the build stage (Dockerfile)', () => {
  it("installs the workspace's lockfile, which holds none of the bench's peer servers", () => {
    const install = stageInstructions('build').filter(({ keyword }) => keyword === 'RUN');
    assert.ok(install.some(({ rest }) => /\bnpm ci\b/.test(rest)));
    // What the stage copies before its install: the workspace's manifests, not bench/'s.
    const copied = stageInstructions('build')
      .filter(({ keyword }) => keyword === 'COPY')
      .map(({ rest }) => rest);
    assert.ok(copied.includes('package.json package-lock.json ./'));
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const peers = Object.keys(
      JSON.parse(readFileSync(join(ROOT, 'bench/package.json'), 'utf8')).dependencies,
    );
    assert.ok(peers.includes('express') && peers.includes('bun'));
    for (const peer of peers)
      assert.equal(lock.packages[`node_modules/${peer}`], undefined, `${peer} is in the lockfile`);
  });
});
