// What every CommonEngine-based variant needs from the one production build: its folders and the
// app's server bundle. The engine, the bootstrap function and RESPONSE_INIT all come from
// dist/server/main.server.mjs so that a single copy of Angular renders (a second copy from
// node_modules would have its own injection tokens and platform). In a localized build, the app
// is the measured locale's (bench/lib/measured-site.mjs): dist/server/<locale>/main.server.mjs,
// with its files in dist/browser/<locale>/, served as a site under its prefix (`/en-US`).
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { APP_DIST } from '../../scripts/lib/paths.mjs';
import { measuredSite, urlInSite } from '../lib/measured-site.mjs';

/** The build to serve: BENCH_DIST, or the app's build (dist/, or angular.json's outputPath). */
export const distDir = resolve(process.env.BENCH_DIST ?? APP_DIST);
const site = await measuredSite(distDir);
export const browserDistFolder = site.browserDir;
export const serverDistFolder = site.serverDir;
export const indexHtml = join(serverDistFolder, 'index.server.html');
/** Where the app's pages and files live: `` (the root) in a plain build, `/en-US` in a localized one. */
export const sitePrefix = site.prefix;
/** A request's URL as the app under sitePrefix sees it (`/en-US/products/7` → `/products/7`). */
export const inSite = (url) => urlInSite(sitePrefix, url);

const bundle = await import(pathToFileURL(join(serverDistFolder, 'main.server.mjs')).href);
export const bootstrap = bundle.default;
export const { CommonEngine, RESPONSE_INIT } = bundle;
/** The app's server routes, when its bundle exports them (the origin's main.server.ts does). */
export const serverRoutes = bundle.serverRoutes ?? [];

/** Same host list as the origin's default (NG_ALLOWED_HOSTS unset). */
export const allowedHosts = ['localhost', '127.0.0.1'];

export const port = Number(process.env.PORT ?? 4000);
export const host = process.env.HOST || '127.0.0.1';
