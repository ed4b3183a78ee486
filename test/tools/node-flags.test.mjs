// The origin's Node flags (scripts/lib/node-flags.mjs) are spelled out where a module cannot be
// imported: package.json's serve:ssr and the Dockerfile's CMD. This keeps them in step (the bench's
// use of them is test/bench/options.test.mjs's).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
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
