// Angular's own server for a build, in this process: @angular/ssr's AngularAppEngine on the build's
// engine manifest, as the CLI's generated server.ts runs it. The origin's answers are compared to it.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
// Angular's packages as published need the linker, or the JIT compiler loaded before them: the
// pages themselves are rendered by the build's bundles, compiled ahead of time.
import '@angular/compiler';
import { AngularAppEngine, ɵsetAngularAppEngineManifest } from '@angular/ssr';

/**
 * `answer(path, headers)`: what Angular's engine answers, `{ status, headers, text }`; a 404 where
 * it answers nothing (Express, in the generated server, then sends its own 404).
 */
export async function angularServer(dist) {
  const manifest = await import(
    pathToFileURL(join(dist, 'server/angular-app-engine-manifest.mjs')).href
  );
  ɵsetAngularAppEngineManifest(manifest.default);
  const engine = new AngularAppEngine({ allowedHosts: ['localhost'] });
  return async (path, headers = {}) => {
    const response = await engine.handle(new Request(`http://localhost${path}`, { headers }));
    if (response === null) {
      return { status: 404, headers: new Headers(), text: '' };
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}
