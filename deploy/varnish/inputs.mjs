// `npm run varnish:inputs`: writes deploy/varnish/inputs.vcl from a build's routes — the cookies
// and headers their renderInputs() declare, and each one's closed set — so Varnish keys a page by
// exactly what the origin renders it from. Run it again whenever a declaration changes (the
// template's test:deploy fails while the file is behind the app).
//   node deploy/varnish/inputs.mjs [dist] [out]
// By default the app's build, where angular.json's outputPath puts it (scripts/lib/paths.mjs),
// and deploy/varnish/inputs.vcl.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { APP_DIST } from '../../scripts/lib/paths.mjs';
import { readBuildDirs } from '../../server/locales/build-layout.ts';
import { declaredInputs } from '../../server/request/render-inputs.ts';
import { vclForInputs } from './inputs-vcl.mjs';

/**
 * inputs.vcl for a build's routes. Throws when two routes give one input different defaults (one
 * key cannot serve both).
 * @param {{ path: string, headers?: Record<string, string> }[]} serverRoutes
 */
export function inputsVcl(serverRoutes) {
  return vclForInputs(declaredInputs(serverRoutes));
}

if (process.argv[1] === import.meta.filename) {
  const dist = process.argv[2] ?? APP_DIST;
  const out = process.argv[3] ?? join(import.meta.dirname, 'inputs.vcl');
  // Every locale of a localized build has the same routes: the first one's are the app's.
  const [{ serverDir }] = (await readBuildDirs(dist)).locales;
  const { serverRoutes } = await import(pathToFileURL(join(serverDir, 'main.server.mjs')).href);
  const inputs = declaredInputs(serverRoutes);
  writeFileSync(out, vclForInputs(inputs));
  const keys = inputs.map((input) => `${input.kind} ${input.name}`);
  console.log(
    `Wrote ${out}: Varnish keys pages by their URL${keys.length ? ` and ${keys.join(', ')}` : ' alone (no route declares an input)'}.`,
  );
}
