// What every CommonEngine-based variant needs from the one production build: its folders and the
// app's server bundle. The engine, the bootstrap function and RESPONSE_INIT all come from
// dist/server/main.server.mjs so that a single copy of Angular renders (a second copy from
// node_modules would have its own injection tokens and platform).
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The build to serve: BENCH_DIST, or the project's dist/. */
export const distDir = resolve(process.env.BENCH_DIST ?? join(import.meta.dirname, '../../dist'));
export const browserDistFolder = join(distDir, 'browser');
export const serverDistFolder = join(distDir, 'server');
export const indexHtml = join(serverDistFolder, 'index.server.html');

const bundle = await import(pathToFileURL(join(serverDistFolder, 'main.server.mjs')).href);
export const bootstrap = bundle.default;
export const { CommonEngine, RESPONSE_INIT } = bundle;

/** Same host list as the origin's default (NG_ALLOWED_HOSTS unset). */
export const allowedHosts = ['localhost', '127.0.0.1'];

export const port = Number(process.env.PORT ?? 4000);
export const host = process.env.HOST || '127.0.0.1';
