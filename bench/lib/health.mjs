// What an origin process says of itself at /healthz: renders begun, parts, caches, errors by code.
// The bench reads its counters there before and after a run to say what the run made.
import { request } from '../../scripts/lib/http.mjs';

/**
 * The process's /healthz, parsed.
 * @param {string} url the process's address
 * @returns {Promise<any>}
 */
export async function readHealth(url) {
  const { status, text } = await request(url, '/healthz');
  if (status !== 200) throw new Error(`GET ${url}/healthz: ${status}`);
  return JSON.parse(text);
}
