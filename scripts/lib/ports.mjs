// The loopback ports the tests and the tools (bench, soak, profile) listen on, and have the servers
// they start listen on. By default any free port, the kernel's pick. With TEST_PORT_RANGE=first-last
// (e.g. 40000-40999), a free port of that range only: for machines where other services, a firewall
// or a container's published ports leave only some ports free for them.
import { createServer } from 'node:net';

/** @typedef {{ first: number, last: number }} PortRange */

/**
 * TEST_PORT_RANGE read: undefined when unset; an error naming the variable when it is not a range.
 * @param {string | undefined} value
 * @returns {PortRange | undefined}
 */
export function parsePortRange(value) {
  if (value === undefined || value.trim() === '') return undefined;
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(value);
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [];
  if (!match || first < 1024 || last > 65535 || first > last) {
    throw new Error(
      `TEST_PORT_RANGE must be "first-last", two ports from 1024 to 65535 with first ≤ last (e.g. 40000-40999), got "${value}"`,
    );
  }
  return { first, last };
}

export const PORT_RANGE = parsePortRange(process.env['TEST_PORT_RANGE']);

/**
 * Listens `server` (net or http) on `host`: on a free port of TEST_PORT_RANGE, trying others of it
 * while the one tried is taken, or on any free port without one. Resolves with the port.
 * @param {import('node:net').Server} server
 * @returns {Promise<number>}
 */
export async function listenOnFreePort(server, host = '127.0.0.1') {
  for (const port of candidates()) {
    const error = await new Promise((resolve) => {
      const onError = (/** @type {NodeJS.ErrnoException} */ failure) => resolve(failure);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve(undefined);
      });
    });
    if (!error) return /** @type {import('node:net').AddressInfo} */ (server.address()).port;
    if (error.code !== 'EADDRINUSE' || !PORT_RANGE) throw error;
  }
  throw new Error(
    `no free port in TEST_PORT_RANGE ${PORT_RANGE?.first}-${PORT_RANGE?.last}: widen the range`,
  );
}

/**
 * A port free right now, for a process about to listen on it (redis-server, the bench's servers,
 * `ng serve`): it is released at once, so another may take it first; the range makes that rarer
 * by trying its ports in a random order.
 * @returns {Promise<number>}
 */
export async function freePort(host = '127.0.0.1') {
  const probe = createServer();
  const port = await listenOnFreePort(probe, host);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * What to set a server's port variable (PORT, METRICS_PORT) to when it may listen anywhere: `0`
 * (its own pick) without a range, a free port of the range with one.
 * @returns {Promise<string>}
 */
export async function anyPortSetting() {
  return PORT_RANGE ? String(await freePort()) : '0';
}

/** The ports to try: 0 (the kernel's pick) alone, or every port of the range from a random one. */
function* candidates() {
  if (!PORT_RANGE) {
    yield 0;
    return;
  }
  const size = PORT_RANGE.last - PORT_RANGE.first + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) yield PORT_RANGE.first + ((start + i) % size);
}
