// `node scripts/each-engine.mjs <command…>`: runs a test command once per render engine, with
// RENDER_ENGINE set for the app engine and unset for CommonEngine (the default, so that run also
// proves the default). The origins the tests start inherit it: the same test files cover both
// engines. Both runs happen even if the first fails; the exit code is 1 if either failed.
import { spawn } from 'node:child_process';

/** The engines, as RENDER_ENGINE names them (docs/choosing-an-engine.md). */
export const ENGINES = ['common', 'app'];

function run(command, engine) {
  const env = { ...process.env };
  delete env['RENDER_ENGINE'];
  if (engine !== 'common') {
    env['RENDER_ENGINE'] = engine;
  }
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function main(command) {
  if (command.length === 0) {
    console.error('usage: node scripts/each-engine.mjs <command…>');
    return 2;
  }
  const failed = [];
  for (const engine of ENGINES) {
    console.log(`\n── RENDER_ENGINE=${engine} ──\n`);
    const end = await run(command, engine);
    if (end.signal === 'SIGINT') {
      return 130;
    }
    if (end.code !== 0) {
      failed.push(`${engine} (${end.error?.message ?? end.signal ?? `exit code ${end.code}`})`);
    }
  }
  if (failed.length > 0) {
    console.log(`\nFailed with RENDER_ENGINE=${failed.join(', ')}`);
  }
  return failed.length > 0 ? 1 : 0;
}

if (process.argv[1] === import.meta.filename) process.exitCode = await main(process.argv.slice(2));
