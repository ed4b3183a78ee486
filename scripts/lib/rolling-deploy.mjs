// Replicas of the origin behind the shipped Varnish (deploy/varnish/default.vcl, one backend per
// port), and a rolling deploy of them under load: a new replica on the free port, in once Varnish's
// probe says so, then SIGTERM to the oldest, which exits before the next. What
// test/deploy/rolling-deploy.test.mjs asserts and scripts/rolling-deploy.mjs measures.
import { setTimeout as sleep } from 'node:timers/promises';
import { http1Load } from './http1-load.mjs';
import { startOrigin } from './origin-process.mjs';
import { freePort } from './ports.mjs';
import { startVarnish } from './varnish.mjs';
import { waitFor } from './wait.mjs';

/**
 * @typedef {Awaited<ReturnType<typeof startOrigin>>} Origin
 * @typedef {{ port: number, origin: Origin }} Replica
 */

/** The exit code of an origin told to stop; one still running after `timeoutMs` is killed. */
async function exitOf(origin, timeoutMs = 30_000) {
  const timer = setTimeout(() => process.kill(origin.pid, 'SIGKILL'), timeoutMs);
  const code = await origin.exited;
  clearTimeout(timer);
  if (code === null)
    throw new Error(`origin ${origin.pid} still ran ${timeoutMs / 1000} s after SIGTERM`);
  return code;
}

/**
 * Varnish in front of `slots` ports, an origin (`dist`, `env`, `nodeArgs`) on each of the first
 * `replicas`, the others free for the next ones; resolves once Varnish sees every one healthy.
 * `env` may be a function of Varnish's URL (an origin that purges it).
 * @param {{ dist: string, inputsVcl: string, editVcl?: (vcl: string) => string, env?: Record<string, string> | ((varnishUrl: string) => Record<string, string>), nodeArgs?: string[], slots?: number, replicas?: number }} options
 */
export async function startReplicas({
  dist,
  inputsVcl,
  editVcl,
  env = {},
  nodeArgs = [],
  slots = 3,
  replicas = 2,
}) {
  const ports = [];
  while (ports.length < slots) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const varnish = await startVarnish({ backendPorts: ports, inputsVcl, editVcl });
  const envOf = typeof env === 'function' ? env(varnish.url) : env;
  /** The replicas serving, oldest first. */
  const serving = /** @type {Replica[]} */ ([]);
  /** The n-th port is backend origin_n (scripts/lib/varnish.mjs). */
  const backendOf = (port) => `origin_${ports.indexOf(port) + 1}`;
  const healthy = async (port) => (await varnish.health())[backendOf(port)] === true;

  /** An origin on `port`, once Varnish's probe has seen it ready. */
  const start = async (port) => {
    // TRUST_PROXY as deployed behind the shipped VCL, which overwrites what a trusted proxy says
    // (X-Forwarded-*, Surrogate-Capability): pages with personal parts come as ESI templates.
    const env = { TRUST_PROXY: 'true', ...envOf, PORT: String(port) };
    const origin = await startOrigin({ dist, nodeArgs, env });
    await waitFor(() => healthy(port), {
      what: `healthy origin on ${port} as Varnish's probe sees it`,
      timeoutMs: 20_000,
      everyMs: 50,
    });
    return { port, origin };
  };
  const stop = async () => {
    await Promise.all(serving.map(({ origin }) => origin.stop()));
    await varnish.stop();
  };
  try {
    for (const port of ports.slice(0, replicas)) serving.push(await start(port));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    varnish,
    serving,
    backendOf,
    healthy,
    /**
     * A new replica on a free port, in once healthy; then SIGTERM to the oldest. Resolves with the
     * old one's exit code, once it exited.
     * @param {(stopping: Replica) => Promise<void>} [whileStopping] runs right after the SIGTERM
     */
    async replace(whileStopping) {
      const free = ports.find((port) => !serving.some((replica) => replica.port === port));
      if (free === undefined) throw new Error('no free port for a replica: more slots needed');
      serving.push(await start(free));
      const stopping = /** @type {Replica} */ (serving.shift());
      process.kill(stopping.origin.pid, 'SIGTERM');
      await whileStopping?.(stopping);
      return exitOf(stopping.origin);
    },
    stop,
  };
}

/**
 * What a deploy's load asks for, all of it reaching the origins: a page rendered per visitor
 * (`/private-seen`, which Varnish passes), a POST to the app's API (never retried; a GET of it
 * with `onlyGets`), and a file under a query string of its own (a miss each time).
 * @param {string} tag makes this load's URLs its own
 */
export function deployRequests(tag, { onlyGets = false, count = 100_000 } = {}) {
  return Array.from({ length: count }, (_, i) => {
    switch (i % 4) {
      case 0:
        return '/private-seen';
      case 1:
        if (onlyGets) return `/api/echo?deploy=${tag}-${i}`;
        return {
          method: 'POST',
          path: '/api/echo',
          body: `{"deploy":"${tag}","request":${i}}`,
          headers: { 'content-type': 'application/json' },
        };
      default:
        return `/favicon.ico?deploy=${tag}-${i}`;
    }
  });
}

/**
 * `replacements` replacements (`fleet.replace()`) under HTTP/1.1 load through Varnish, one after
 * the other; the load starts a second before the first and stops a second after the last.
 * Resolves with the load's counts and the replaced origins' exit codes.
 * @param {Awaited<ReturnType<typeof startReplicas>>} fleet
 * @param {{ replacements: number, tag: string, onlyGets?: boolean, connections?: number, rate?: number, deadlineMs?: number }} options
 */
export async function rollingDeploy(
  fleet,
  { replacements, tag, onlyGets, connections = 8, rate = 400, deadlineMs = 120_000 },
) {
  const stopLoad = new AbortController();
  const load = http1Load({
    url: fleet.varnish.url,
    paths: deployRequests(tag, { onlyGets }),
    signal: stopLoad.signal,
    connections,
    rate,
    deadlineMs,
  });
  const exits = [];
  try {
    await sleep(1000);
    for (let i = 0; i < replacements; i++) exits.push(await fleet.replace());
    await sleep(1000);
  } finally {
    stopLoad.abort();
  }
  return { ...(await load), exits };
}
