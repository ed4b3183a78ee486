// Preloaded into the origin by the no-downleveling test (node --import): records the file of every
// module the process loads, ESM and CommonJS alike, and writes the list on SIGUSR2.
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) {
      loaded.add(fileURLToPath(url));
    }
    return nextLoad(url, context);
  },
});
process.on('SIGUSR2', () => {
  writeFileSync(process.env['RECORD_LOADS_TO'], JSON.stringify([...loaded], null, 2));
});
