// The origin's Node flags (scripts/lib/node-flags.mjs) are spelled out where a module cannot be
// imported: package.json's serve:ssr and the Dockerfile's CMD. This keeps them, and the bench, in step.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { VARIANTS } from '../../bench/lib/variants.mjs';
import { NODE_FLAGS } from '../../scripts/lib/node-flags.mjs';
import { ROOT } from '../../scripts/lib/paths.mjs';

const ENTRY = 'dist/server/server.mjs';

describe("the origin's Node flags", () => {
  it('are what npm run serve:ssr starts the origin with', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(scripts['serve:ssr'], new RegExp(`exec node ${NODE_FLAGS.join(' ')} ${ENTRY}$`));
  });

  it("are what the image's CMD starts the origin with", () => {
    const cmd = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').match(/^CMD (.*)$/m);
    assert.deepEqual(JSON.parse(cmd[1]), ['node', ...NODE_FLAGS, ENTRY]);
  });

  it('are what the bench runs every Node variant with, and no Bun one', () => {
    for (const variant of VARIANTS) {
      const [, ...args] = variant.command();
      const flags = args.slice(0, NODE_FLAGS.length);
      if (variant.runtime === 'node') assert.deepEqual(flags, NODE_FLAGS, variant.name);
      else assert.notDeepEqual(flags, NODE_FLAGS, variant.name);
    }
  });

  it('are flags this Node accepts', () => {
    // node exits with "bad option" on a flag it does not know.
    assert.equal(
      execFileSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], {
        encoding: 'utf8',
      }),
      'ok',
    );
  });
});
