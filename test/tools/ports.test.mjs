// TEST_PORT_RANGE: the ports the tests and the tools listen on, and have their servers listen on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parsePortRange } from '../../scripts/lib/ports.mjs';
import { REDIS_SERVER } from '../../scripts/lib/redis-server.mjs';

const LIB = join(import.meta.dirname, '../../scripts/lib');

/** ports.mjs as a process with TEST_PORT_RANGE set reads it (a fresh copy of the module). */
async function portsWithRange(range) {
  const previous = process.env['TEST_PORT_RANGE'];
  process.env['TEST_PORT_RANGE'] = range;
  try {
    return await import(`../../scripts/lib/ports.mjs?range=${range}`);
  } finally {
    if (previous === undefined) delete process.env['TEST_PORT_RANGE'];
    else process.env['TEST_PORT_RANGE'] = previous;
  }
}

/** Two neighbouring loopback ports nothing listens on now, from the kernel's pick. */
async function twoFreePorts() {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [a, b] = [createServer(), createServer()];
    const bind = (server, port) =>
      new Promise((resolve) => {
        server.once('error', () => resolve(undefined));
        server.listen(port, '127.0.0.1', () => resolve(server.address().port));
      });
    const first = await bind(a, 0);
    const second = first < 65535 ? await bind(b, first + 1) : undefined;
    await Promise.all([a, b].map((server) => new Promise((resolve) => server.close(resolve))));
    if (second) return [first, second];
  }
  throw new Error('no two neighbouring free ports');
}

describe('TEST_PORT_RANGE', () => {
  it('reads first-last, and refuses anything else naming the variable', () => {
    assert.equal(parsePortRange(undefined), undefined);
    assert.equal(parsePortRange(''), undefined);
    assert.deepEqual(parsePortRange('40000-40999'), { first: 40000, last: 40999 });
    assert.deepEqual(parsePortRange(' 50000 - 50000 '), { first: 50000, last: 50000 });
    for (const bad of ['40000', '40000-', 'a-b', '40999-40000', '80-90', '60000-70000', '1-2-3'])
      assert.throws(() => parsePortRange(bad), /^Error: TEST_PORT_RANGE must be "first-last"/, bad);
  });

  it('listens in the range, on another free port when one is taken, and says when none is left', async () => {
    const range = await twoFreePorts();
    const { listenOnFreePort, freePort } = await portsWithRange(`${range[0]}-${range[1]}`);
    const servers = [createServer(), createServer(), createServer()];
    try {
      const ports = [];
      for (const server of servers.slice(0, 2)) ports.push(await listenOnFreePort(server));
      assert.deepEqual(ports.sort(), range, 'both ports of the range, one each');
      await assert.rejects(listenOnFreePort(servers[2]), /no free port in TEST_PORT_RANGE/);
      await new Promise((resolve) => servers[0].close(resolve));
      assert.ok(range.includes(await freePort()));
    } finally {
      for (const server of servers) server.close();
    }
  });

  it(
    'gives the servers the tests start a port of the range (redis-server here)',
    {
      skip: existsSync(REDIS_SERVER) ? false : `no ${REDIS_SERVER}`,
    },
    () => {
      const script = `
      const { startRedis } = await import(${JSON.stringify(join(LIB, 'redis-server.mjs'))});
      const redis = await startRedis();
      console.log(redis.port);
      await redis.close();`;
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, TEST_PORT_RANGE: '47100-47199' },
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(result.status, 0, result.stderr);
      const port = Number(result.stdout.trim());
      assert.ok(port >= 47100 && port <= 47199, `port ${port}`);
    },
  );
});
