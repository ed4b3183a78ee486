import { isPlatformServer, PlatformLocation } from '@angular/common';
import { HTTP_TRANSFER_CACHE_ORIGIN_MAP } from '@angular/common/http';
import {
  DOCUMENT,
  type EnvironmentProviders,
  inject,
  InjectionToken,
  makeEnvironmentProviders,
  PLATFORM_ID,
} from '@angular/core';

/**
 * Where the app's API is, as the code that fetches it must address it: in the browser the page's
 * own `/api` (the origin answers it, src/api/); on the server an absolute URL, since a render has no
 * page to be relative to and should not go out through the public address (a CDN, TLS).
 */
export const API_BASE_URL = new InjectionToken<string>('API_BASE_URL', {
  providedIn: 'root',
  factory: () =>
    isPlatformServer(inject(PLATFORM_ID))
      ? serverApiUrl()
      : `${inject(DOCUMENT).location.origin}/api`,
});

/**
 * The server's: API_URL, else the origin's own loopback address (the origin sets API_URL to the
 * port it bound when it is unset: docs/configuration.md). No trailing slash.
 */
export function serverApiUrl(): string {
  // Node's, read through globalThis: the unit tests compile this file without Node's types.
  const env =
    (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
  return (env['API_URL'] ?? `http://127.0.0.1:${env['PORT'] ?? 4000}/api`).replace(/\/+$/, '');
}

/**
 * Server only (app.config.server.ts). Angular's HttpTransferCache keys a response by its URL: the
 * server asked `http://127.0.0.1:4000/api/…`, the browser asks `https://shop.example/api/…`. Mapping
 * the API's origin to the page's makes the server store each response under the URL the browser
 * will ask for, so hydration finds it and the browser never fetches again what the server fetched.
 * The paths must agree too: API_URL names the same `/api` the browser reaches.
 */
export function provideApiTransferCache(): EnvironmentProviders {
  return makeEnvironmentProviders([
    {
      provide: HTTP_TRANSFER_CACHE_ORIGIN_MAP,
      useFactory: () => {
        const { protocol, hostname, port } = inject(PlatformLocation);
        const page = `${protocol}//${hostname}${port ? `:${port}` : ''}`;
        const api = new URL(serverApiUrl()).origin;
        return api === page ? {} : { [api]: page };
      },
    },
  ]);
}
