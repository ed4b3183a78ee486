// Starts the production origin (dist/server/server.mjs) as a real process on a free loopback port.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');
/** The build the origin's tests run against: the tests' own app (test/app), not the one in src/. */
export const DIST = join(ROOT, 'dist-test');
/** The app's own build (src/), for what measures or checks the user's app. */
export const APP_DIST = join(ROOT, 'dist');

/**
 * How to start the origin. `command` replaces the whole command line (e.g. `npm run serve:ssr`);
 * `env` and the rest of the process setup still apply.
 * @typedef {{ env?: Record<string, string>, dist?: string, nodeArgs?: string[], executable?: string, command?: string[] }} OriginOptions
 */

/**
 * The origin process: any free loopback port, default hosts, output piped to the caller.
 * @param {OriginOptions} options
 */
function spawnOrigin({ env, dist = DIST, nodeArgs = [], executable = process.execPath, command }) {
  const [file, ...args] = command ?? [executable, ...nodeArgs, join(dist, 'server/server.mjs')];
  return spawn(file, args, {
    cwd: ROOT,
    env: { ...process.env, NG_ALLOWED_HOSTS: '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * @param {OriginOptions} [options]
 * @returns {Promise<{ exited: Promise<number | null>, pid: number, url: string, port: number, stdout: () => string, stderr: () => string, stop: () => Promise<number | null> }>}
 */
export async function startOrigin(options = {}) {
  const child = spawnOrigin(options);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));

  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave it running: a process that outlives its test keeps the test file from ending.
      child.kill('SIGKILL');
      reject(new Error(`origin did not start in 15 s:\n${stdout}\n${stderr}`));
    }, 15_000);
    const onData = () => {
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`origin exited with ${code} before listening:\n${stdout}\n${stderr}`));
    });
  });

  return {
    exited,
    pid: child.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
      }
      return exited;
    },
  };
}

/** Runs the origin with the given environment until it exits; for startup errors. */
export async function runOriginExpectingExit(env, timeoutMs = 15_000) {
  const child = spawnOrigin({ env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * One HTTP/1.1 request over loopback with full control of the headers (fetch forbids setting Host).
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer, text: string }>}
 */
export function request(baseUrl, path, { method = 'GET', headers = {}, body } = {}) {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        headers: { connection: 'close', ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }), ...headers },
        timeout: 15_000,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const buffer = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buffer, text: buffer.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends raw bytes over one TCP connection and collects everything until the server closes it:
 * for requests no HTTP client would send (duplicate Host, absolute-form, garbage).
 * @returns {Promise<{ status: number, raw: string, responses: string[] }>}
 */
export function rawRequest(port, bytes, { timeoutMs = 10_000, afterWrite } = {}) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
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
      const responses = raw.split(/(?=HTTP\/1\.1 \d{3} )/).filter(Boolean);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0), raw, responses });
    });
  });
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

/** The origin's JSON log lines so far. */
export function logLines(origin) {
  return origin
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}
