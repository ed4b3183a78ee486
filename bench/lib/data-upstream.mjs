// Where the bench's renders get their data: the app's own API (its server bundle's `api` export,
// the demo's src/api/) served by the bench on loopback, one server for each process it loads, so
// that what each process asked of its API is counted apart. Every variant, the stock server and the
// peers included, renders the same app and is given its API the same way (API_URL).
import { appApiOf, serveAppApi } from '../../scripts/lib/app-api.mjs';

/** The scenario made of data, which loads processes of its own. */
export const DATA_SCENARIO = 'ssr-data';
/** How late ssr-data's API answers, as an API across a network does. */
export const DATA_DELAY_MS = 40;
/** How many distinct pages the burst asks for at once. */
export const BURST_PAGES = 100;

/**
 * The upstreams of a run, or why there are none (the app exports no API: its pages fetch nothing the
 * bench can serve, and ssr-data is skipped).
 * @param {string} serverDir the measured app's server bundle
 */
export async function createUpstreams(serverDir) {
  const api = await appApiOf(serverDir);
  /** @type {Awaited<ReturnType<typeof serveAppApi>>[]} */
  const started = [];
  return {
    /** Why the app's pages have no upstream here; undefined when they have. */
    missing: api
      ? undefined
      : 'the app\'s server bundle exports no "api" for the bench to serve as the upstream of its data',
    /**
     * A new upstream for one process: `delayMs` before each answer; undefined without an API.
     * @param {number} [delayMs]
     */
    async start(delayMs = 0) {
      if (!api) return undefined;
      const upstream = await serveAppApi(api, { delayMs });
      started.push(upstream);
      return upstream;
    },
    closeAll: () => Promise.all(started.map((upstream) => upstream.close())),
  };
}

/**
 * How long ssr-data's origin processes let a render run (RENDER_TIMEOUT_MS, 5 s by default): the
 * burst's hundred renders at once took longer than 5 s on a busy 2-core machine, and a render out
 * of time answers the client-side shell without asking the API, which the stock server (no render
 * timeout) never does: the burst would count shells as pages.
 */
const DATA_RENDER_TIMEOUT_MS = '60000';

/**
 * The environment of a process given `upstream`: its API there, and for the scenarios other than
 * ssr-data the origin's data cache off, so that every variant pays the same fetches per render (the
 * stock server and the peers have no data cache) and those scenarios keep measuring what they
 * measured before pages were made of data.
 * @param {{ url: string } | undefined} upstream @param {boolean} dataScenario
 */
export function upstreamEnv(upstream, dataScenario) {
  if (!upstream) return {};
  return dataScenario
    ? {
        API_URL: upstream.url,
        DATA_CACHE_BYTES: undefined,
        RENDER_CACHE_BYTES: '0',
        RENDER_TIMEOUT_MS: DATA_RENDER_TIMEOUT_MS,
      }
    : { API_URL: upstream.url, DATA_CACHE_BYTES: '0' };
}

/**
 * A burst: `paths` asked all at once of a process that has asked its API for nothing yet. Returns
 * the statuses, how many 200s were not rendered for the request (no `ng-server-context="ssr"`: the
 * client-side shell of a render out of time, which asks the API nothing), what reached the API by
 * path, and the path asked most: a server that asks its API once for what many renders need at
 * the same moment asks no path twice.
 * @param {string} url the process's address
 * @param {string[]} paths distinct pages
 * @param {{ counts: Map<string, number>, reset: () => void }} upstream
 */
export async function burst(url, paths, upstream) {
  upstream.reset();
  const statuses = {};
  let notRendered = 0;
  await Promise.all(
    paths.map(async (path) => {
      let status;
      try {
        const response = await fetch(`${url}${path}`);
        const body = await response.text();
        status = String(response.status);
        if (response.status === 200 && !body.includes('ng-server-context="ssr"')) notRendered++;
      } catch {
        status = 'error';
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
    }),
  );
  const byPath = Object.fromEntries(upstream.counts);
  const [path, requests] = Object.entries(byPath).reduce(
    (most, entry) => (entry[1] > most[1] ? entry : most),
    ['', 0],
  );
  return {
    pages: paths.length,
    statuses,
    notRendered,
    upstreamRequests: Object.values(byPath).reduce((sum, n) => sum + n, 0),
    byPath,
    mostAsked: { path, requests },
  };
}

/**
 * Asks for each of `paths` once, `concurrency` at a time: every page of ssr-data's set made once
 * before the load, so what the load measures is a server after warm-up.
 * @param {string} url @param {string[]} paths
 * @returns {Promise<string[]>} the problems (a page answered with another status than 200)
 */
export async function askEach(url, paths, concurrency = 8) {
  const problems = [];
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++];
      try {
        const response = await fetch(`${url}${path}`);
        await response.arrayBuffer();
        if (response.status !== 200) problems.push(`GET ${path} while warming: ${response.status}`);
      } catch (error) {
        problems.push(
          `GET ${path} while warming: ${error instanceof Error ? error.message : error}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return problems;
}
