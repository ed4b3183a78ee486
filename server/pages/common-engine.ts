import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StaticProvider } from '@angular/core';
import type * as AppServerBundle from '../main.server.mjs';
import { nonceTemplate } from '../csp/nonce-template.ts';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { StartupError } from '../startup-error.ts';
import { channels, tracedSync } from '../channels.ts';
import { createCriticalCss } from './critical-css.ts';
import type { PageEngine } from './engine.ts';

/**
 * How rendered pages get their critical CSS (CRITICAL_CSS): `compiled` (stylesheets compiled at
 * startup), `per-request` (CommonEngine's full Beasties pass) or `off`.
 */
export type CriticalCssMode = 'compiled' | 'per-request' | 'off';
export const CRITICAL_CSS_MODES: readonly CriticalCssMode[] = ['compiled', 'per-request', 'off'];

export interface CommonEngineOptions {
  /** The app's server bundle (dist/server/main.server.mjs): bootstrap, engine and tokens. */
  app: typeof AppServerBundle;
  browserDir: string;
  serverDir: string;
  allowedHosts: readonly string[];
  criticalCss: CriticalCssMode;
  /** Renders from an index whose root element holds the nonce placeholder (ngCspNonce). */
  csp: ContentSecurityPolicy | undefined;
  /** The locale of this bundle in a localized build; undefined in a plain one. */
  locale?: string;
}

/**
 * Renders with @angular/ssr's CommonEngine: the app's bootstrap, the server index, and the route's
 * status and headers as RESPONSE_INIT, which the app may change while it renders (a 404 page does).
 * CommonEngine answers prerendered routes from their files (cached by the patch in patches/).
 */
export function createCommonEngine(options: CommonEngineOptions): PageEngine {
  const { app, browserDir } = options;
  const engine = new app.CommonEngine({ allowedHosts: [...options.allowedHosts] });
  const documentFilePath = join(options.serverDir, 'index.server.html');
  // Angular reads CSP_NONCE from the root's ngCspNonce: what it writes (its styles, its scripts,
  // anything the app adds with CSP_NONCE) then holds the placeholder each answer fills in.
  const document =
    options.csp &&
    nonceTemplate(readFileSync(documentFilePath, 'utf8'), options.csp).body.toString();
  // Compiled at startup (the default): cheaper per render than CommonEngine's Beasties pass (docs/architecture.md#what-each-optimization-saves).
  const inlineCompiledCss =
    options.criticalCss === 'compiled' && traceable(createCriticalCss(browserDir));
  // An app bundle from before the origin gave renders their request exports no REQUEST token, and
  // one from before requestCookie() asked the origin by name no REQUEST_CONTEXT.
  const { REQUEST, REQUEST_CONTEXT, LOCALE_ID } = app;
  if (options.locale !== undefined && LOCALE_ID === undefined) {
    throw new StartupError(
      `${join(options.serverDir, 'main.server.mjs')} does not export LOCALE_ID: add it to the app's main.server.ts (export { LOCALE_ID } from '@angular/core'), or run ng add again`,
    );
  }
  // Each locale's bundle sets the process-wide $localize.locale as it loads, and LOCALE_ID defaults
  // to it: without this, every render would get the locale of the bundle loaded last.
  const localeProviders: StaticProvider[] =
    options.locale === undefined ? [] : [{ provide: LOCALE_ID!, useValue: options.locale }];
  return async ({ url, request, context, appReads }, route) => {
    // CommonEngine reads nothing of the request itself: every read is the app's.
    appReads();
    // A copy of the route's headers: the app may add to them while it renders (addCacheGroups
    // does), and the route's own record is shared by every render of it.
    const responseInit: ResponseInit = { status: route.status, headers: { ...route.headers } };
    const providers: StaticProvider[] = [
      { provide: app.RESPONSE_INIT, useValue: responseInit },
      ...localeProviders,
    ];
    // What Angular's own server gives a render (AngularNodeAppEngine provides them the same way).
    if (REQUEST !== undefined) {
      providers.push({ provide: REQUEST, useValue: request });
    }
    if (REQUEST_CONTEXT !== undefined) {
      providers.push({ provide: REQUEST_CONTEXT, useValue: context });
    }
    const html = await engine.render({
      bootstrap: app.default,
      documentFilePath,
      document,
      publicPath: browserDir,
      url,
      providers,
      inlineCriticalCss: options.criticalCss === 'per-request',
    });
    return {
      html: inlineCompiledCss ? inlineCompiledCss(html) : html,
      status: responseInit.status ?? 200,
      headers: new Headers(responseInit.headers),
    };
  };
}

/** The client-side shell the build writes for client-rendered routes; read once, the build never changes. */
export function readClientShell(browserDir: string): Buffer {
  return readFileSync(join(browserDir, 'index.csr.html'));
}

/** Critical CSS as a span of its own when a tracer listens. */
function traceable(inline: (html: string) => string): (html: string) => string {
  return (html) =>
    tracedSync(
      channels.criticalCss,
      () => ({ bytes: html.length }),
      () => inline(html),
    );
}
