// Is what a variant answers in a scenario what a browser needs? Checked before any load (a wrong
// answer is never ranked, however fast) and again from the load's own counts afterwards.
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { request as plainRequest } from '../../scripts/lib/http.mjs';
import {
  dataPathAt,
  getScenario,
  PATHS,
  POPULAR_PRODUCTS,
  renderedPathAt,
  sessionOf,
  visitorPages,
} from './scenarios.mjs';

const DECODE = { br: brotliDecompressSync, gzip: gunzipSync, zstd: zstdDecompressSync };
/** The Accept-Encoding of the scenario being checked (compressed scenarios: a browser's). */
let acceptEncoding;

/**
 * A request as the scenario's load sends it; the body decoded from its Content-Encoding (the
 * checks read content), `wireBytes` what came over the wire (the bytes-per-response floor).
 * @param {string} baseUrl @param {string} path @param {{ headers?: Record<string, string> }} [options]
 */
async function request(baseUrl, path, options = {}) {
  const headers = {
    ...(acceptEncoding && { 'accept-encoding': acceptEncoding }),
    ...options.headers,
  };
  const res = await plainRequest(baseUrl, path, { ...options, headers });
  const decode = DECODE[res.headers['content-encoding']];
  return { ...res, wireBytes: res.body.length, body: decode ? decode(res.body) : res.body };
}

const CONTENT_TYPES = {
  html: /^text\/html\b/i,
  js: /^(text|application)\/javascript\b/i,
  css: /^text\/css\b/i,
};
/**
 * Critical CSS inlined, as Beasties leaves it whoever runs it: a plain <style> block in the head and
 * the global stylesheet deferred with media="print". Proves the "same setting" claim per variant.
 */
const CRITICAL_CSS =
  /<head>[\s\S]*<style>[^<]+<\/style>[\s\S]*<link rel="stylesheet" href="styles-[^"]+\.css" media="print"[\s\S]*<\/head>/;
/**
 * The global stylesheet linked from the head: all a page has of it when the stylesheet holds no rule
 * (the stock app's empty styles.css), which leaves nothing to inline.
 */
const STYLESHEET_LINK =
  /<head>[\s\S]*<link rel="stylesheet" href="styles-[^"]+\.css"[\s\S]*<\/head>/;
/**
 * A page as the build or the render wrote it: under a Content-Security-Policy (origin-csp) each
 * answer adds its nonce to the tags that need it (docs/content-security-policy.md).
 */
const NONCE_ATTRIBUTES = / (?:nonce|ngcspnonce)="[\w-]{22}"/gi;
const withoutNonces = (res) =>
  'content-security-policy' in res.headers
    ? Buffer.from(res.body.toString('utf8').replace(NONCE_ATTRIBUTES, ''))
    : res.body;

/**
 * The problems of each check that are an answer's status alone (a redirect where the page was
 * expected, a 200 where the app answers 404): a peer server that cannot serve one of the app's
 * routes as the app declares it, rather than a wrong answer to a request it handles.
 * @type {WeakMap<string[], Set<string>>}
 */
const statusProblems = new WeakMap();

/** Records a problem that is the status of an answer alone. @param {string[]} problems @param {string} problem */
function wrongStatus(problems, problem) {
  problems.push(problem);
  if (!statusProblems.has(problems)) statusProblems.set(problems, new Set());
  statusProblems.get(problems).add(problem);
}

/** ` (Location: /about/)` for a redirect, nothing otherwise. */
const locationOf = (res) =>
  res.status >= 300 && res.status < 400 && res.headers.location
    ? ` (Location: ${res.headers.location})`
    : '';

/** Measured bytes per response (headers included) may not fall below this share of the expected body. */
const MIN_BYTES_SHARE = 0.9;

/**
 * @typedef {import('./scenarios.mjs').BuildInfo} BuildInfo
 * @typedef {import('./scenarios.mjs').BuildFile} BuildFile
 * @typedef {'304' | 'ignored' | 'no-etag'} Revalidation
 * @typedef {{ valid: boolean, problems: string[], notes: string[], context: { etag?: string },
 *   revalidation?: Revalidation, expectedStatuses: number[], minBytesPerResponse: number,
 *   rendersEach?: boolean, statusOnly?: boolean, unsupported?: boolean }} ScenarioCheck
 *   (rendersEach: its rotating page must be rendered for every request, never answered by a cache;
 *   statusOnly: every problem is an answer's status; unsupported: set by the run for a peer whose
 *   problems are statusOnly, a server that cannot serve the app's routes as the app declares them)
 */

/** @param {import('../../scripts/lib/http.mjs').HttpResponse} res */
function describe(res) {
  return `${res.status} ${res.headers['content-type'] ?? '(no content-type)'}, ${res.body.length} B`;
}

/**
 * A file of the build, as a browser fetching it needs it: 200, its type, all of its bytes.
 * @param {string} baseUrl @param {BuildFile} file @param {string[]} problems
 */
async function checkFile(baseUrl, file, problems) {
  const res = await request(baseUrl, file.path);
  const type = res.headers['content-type'] ?? '';
  if (res.status !== 200)
    wrongStatus(problems, `GET ${file.path}: status ${res.status}${locationOf(res)}, expected 200`);
  else if (!CONTENT_TYPES[file.kind].test(type))
    problems.push(`GET ${file.path}: content-type "${type}", expected ${file.kind}`);
  else if (withoutNonces(res).length !== file.size)
    problems.push(`GET ${file.path}: ${res.body.length} B, the file has ${file.size} B`);
  return res;
}

/**
 * A page rendered for this request (load-paths.json's "rendered", or `expected` for another): its
 * status, HTML, rendered by Angular on the server for this request, whole, with the critical CSS
 * every variant renders with (when the global stylesheet has any to inline; else with the
 * stylesheet linked, if there is one).
 * @param {string} baseUrl @param {string} path @param {BuildInfo} build @param {string[]} problems
 * @param {number} [expected] @param {Record<string, string>} [headers] what the request carries
 */
async function checkRendered(
  baseUrl,
  path,
  build,
  problems,
  expected = PATHS.rendered?.status ?? 200,
  headers = {},
) {
  const res = await request(baseUrl, path, { headers });
  const text = withoutNonces(res).toString('utf8');
  if (res.status !== expected)
    wrongStatus(
      problems,
      `GET ${path}: status ${res.status}${locationOf(res)}, expected ${expected}`,
    );
  else if (!CONTENT_TYPES.html.test(res.headers['content-type'] ?? ''))
    problems.push(`GET ${path}: ${describe(res)}, expected HTML`);
  else if (!/ng-server-context="ssr"/.test(text))
    problems.push(
      `GET ${path}: not rendered on the server for this request (no ng-server-context="ssr")`,
    );
  else if (!text.trimEnd().endsWith('</html>'))
    problems.push(`GET ${path}: the page is truncated (no closing </html>)`);
  else if (build.criticalCss && !CRITICAL_CSS.test(text))
    problems.push(`GET ${path}: no inlined critical CSS (every variant must render with it on)`);
  else if (!build.criticalCss && build.stylesCss && !STYLESHEET_LINK.test(text))
    problems.push(`GET ${path}: no link to the global stylesheet ${build.stylesCss.path}`);
  return res;
}

/** Pages rendered for different ids must differ when they are the route's own pages (200). */
const distinctPerId = () => (PATHS.rendered?.status ?? 200) === 200;

/** The pages of the rotation at these positions (from its end when negative), each once. */
function pagesAt(...positions) {
  const count = PATHS.rendered?.count ?? 1;
  return [...new Set(positions.map((k) => renderedPathAt(((k % count) + count) % count)))];
}

/**
 * Why a scenario that renders per request got answers from a cache, and what to change: its
 * rotation ran out of pages and came back to ones the cache held.
 */
function cacheHitsProblem(hits, requests) {
  const rendered = PATHS.rendered;
  return (
    `${hits} of ${requests} answers came from a cache (Cache-Status: hit), not from a render: ` +
    `load-paths.json's "rendered" (${rendered?.label}) repeats pages within a run and its route is cached. ` +
    'Name more pages there ("ids" as a range, or a longer "values" list) so that no run asks for one twice.'
  );
}
const renderedStatuses = () => [...new Set([200, PATHS.rendered?.status ?? 200])];

/**
 * @param {string} baseUrl the variant's address
 * @param {string} scenario
 * @param {BuildInfo} build
 * @returns {Promise<ScenarioCheck>}
 */
export async function checkScenario(baseUrl, scenario, build) {
  acceptEncoding = getScenario(scenario).acceptEncoding;
  // A compressed scenario answers what its plain one does, in fewer bytes.
  const kind = acceptEncoding ? scenario.replace(/-br$/, '') : scenario;
  /** @type {string[]} */
  const problems = [];
  /** @type {string[]} */
  const notes = [];
  /** @type {ScenarioCheck} */
  const check = {
    valid: false,
    problems,
    notes,
    context: {},
    expectedStatuses: [200],
    minBytesPerResponse: 0,
  };
  const share = (bytes) => Math.floor(bytes * MIN_BYTES_SHARE);
  try {
    switch (kind) {
      case 'ssg': {
        const page = await checkFile(baseUrl, build.page, problems);
        check.minBytesPerResponse = share(page.wireBytes);
        break;
      }
      case 'ssr': {
        // Different ids: each page must be its own, not a cached one. The last of the rotation,
        // which the load reaches only when it has used up every other page.
        const last = PATHS.rendered.count - 1;
        const paths = pagesAt(last, last - 1, last - 2);
        const pages = [];
        for (const path of paths) pages.push(await checkRendered(baseUrl, path, build, problems));
        if (
          distinctPerId() &&
          new Set(pages.map((page) => page.body.toString('utf8'))).size !== pages.length
        ) {
          problems.push('different ids answered the same page');
        }
        const missing = await request(baseUrl, PATHS.notFound);
        if (missing.status !== 404)
          wrongStatus(
            problems,
            `GET ${PATHS.notFound} (load-paths.json's notFound): status ${missing.status}, expected 404`,
          );
        check.expectedStatuses = renderedStatuses();
        check.minBytesPerResponse = share(Math.min(...pages.map((page) => page.body.length)));
        check.rendersEach = true;
        break;
      }
      case 'ssr-cached':
      case 'ssr-visitors':
      case 'ssr-shared': {
        // Popular ids, each asked for twice: the second answer (from a cache, where there is one)
        // must still be that page, and different ids different pages.
        const paths = pagesAt(0, 1, POPULAR_PRODUCTS - 1);
        const pages = [];
        for (const path of [...paths, ...paths])
          pages.push(await checkRendered(baseUrl, path, build, problems));
        const texts = pages.map((page) =>
          withoutNonces(page)
            .toString('utf8')
            .replace(/ng-server-context="[^"]*"/, ''),
        );
        if (new Set(texts).size !== paths.length)
          problems.push('popular pages: not one distinct page per id');
        check.minBytesPerResponse = share(Math.min(...pages.map((page) => page.wireBytes)));
        break;
      }
      case 'ssr-data': {
        // Pages made of data, each asked for twice (the render cache is off: both are renders),
        // from the end of the set, past what the burst asked for: each answered 200, which a page
        // whose data did not come is not (the demo's answers 503), and different ids different pages.
        const last = PATHS.data.count - 1;
        const paths = [
          ...new Set([last, last - 1, last - 2].map((k) => dataPathAt(Math.max(0, k)))),
        ];
        const pages = [];
        for (const path of [...paths, ...paths])
          pages.push(await checkRendered(baseUrl, path, build, problems, 200));
        const texts = pages.map((page) =>
          withoutNonces(page)
            .toString('utf8')
            .replace(/ng-server-context="[^"]*"/, ''),
        );
        if (new Set(texts.slice(0, paths.length)).size !== paths.length)
          problems.push('pages made of data: different ids answered the same page');
        check.minBytesPerResponse = share(Math.min(...pages.map((page) => page.wireBytes)));
        check.rendersEach = true;
        break;
      }
      case 'asset': {
        const files = [build.mainJs, build.stylesCss].filter((file) => file !== undefined);
        for (const file of files) await checkFile(baseUrl, file, problems);
        check.minBytesPerResponse = share(
          files.reduce((sum, file) => sum + file.size, 0) / files.length,
        );
        break;
      }
      case 'revalidate': {
        const first = await checkFile(baseUrl, build.page, problems);
        const etag = first.headers.etag;
        if (!etag) {
          check.revalidation = 'no-etag';
          notes.push(`no ETag on ${build.page.path}: every request gets the full page (200)`);
          check.minBytesPerResponse = share(build.page.size);
          break;
        }
        const again = await request(baseUrl, build.page.path, {
          headers: { 'if-none-match': etag },
        });
        check.context.etag = etag;
        if (again.status === 304) {
          check.revalidation = '304';
          check.expectedStatuses = [304];
          if (again.body.length > 0) problems.push(`304 with a ${again.body.length} B body`);
        } else if (again.status === 200) {
          check.revalidation = 'ignored';
          notes.push(`sends ETag ${etag} but answers If-None-Match with the full page (200)`);
          check.minBytesPerResponse = share(build.page.size);
        } else {
          problems.push(
            `GET ${build.page.path} with If-None-Match: ${etag}: status ${again.status}, expected 304 (or 200)`,
          );
        }
        break;
      }
      case 'mixed':
      case 'mixed-cached': {
        await checkFile(baseUrl, build.page, problems);
        // The rotation's last page, as ssr's check: one the load reaches last.
        const product = await checkRendered(
          baseUrl,
          renderedPathAt(PATHS.rendered.count - 1),
          build,
          problems,
        );
        check.expectedStatuses = renderedStatuses();
        const assets = [build.stylesCss, build.mainJs, ...build.initialChunks].filter(
          (file) => file !== undefined,
        );
        for (const file of assets) await checkFile(baseUrl, file, problems);
        // Each connection works through the cycle from its start, so a short run counts a prefix of
        // it per connection (the slow rendered page often still pending): the floor is the lowest
        // average of any prefix, not the whole cycle's (which failed a 1-s smoke run on stock).
        const sizes = new Map([build.page, ...assets].map((file) => [file.path, file.size]));
        const cycle = getScenario(scenario)
          .requests(build, {})
          .map((request) => sizes.get(request.path) ?? product.body.length);
        let sum = 0;
        const prefixAverages = cycle.map((size, i) => (sum += size) / (i + 1));
        check.minBytesPerResponse = share(Math.min(...prefixAverages));
        check.rendersEach = scenario === 'mixed';
        break;
      }
      default:
        problems.push(`unknown scenario ${scenario}`);
    }
  } catch (error) {
    problems.push(`no answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  check.valid = problems.length === 0;
  check.statusOnly =
    !check.valid && problems.every((problem) => statusProblems.get(problems)?.has(problem));
  return check;
}

/** How often `text` occurs in `page`. */
const occurrences = (page, text) => page.split(text).length - 1;

/**
 * What every visitor's part shows whoever the visitor is: the longest literal piece of
 * load-paths.json's `personal.shows` ("Welcome back, Visitor " of "Welcome back, Visitor {value:4}").
 */
function partMarker(showsText) {
  return showsText
    .split(/\{value(?::\d+)?\}/)
    .reduce((longest, piece) => (piece.length > longest.length ? piece : longest), '');
}

/**
 * What a setup of ssr-personal answers (personal-parts.mjs), as a browser needs it (a page rendered
 * for the request, whole, with critical CSS) and as each visitor must get it: `anonymous`, the
 * shared page with no visitor's part in it; `returning` and `new` (the origin with parts), a
 * private answer holding the visitor's own part ("Welcome back, Visitor v000") and no other; `stock`,
 * a page that holds no other visitor's part either (it has none: every visitor sees the
 * placeholder); `private`, the private page showing the visitor's own session. Several visitors ask
 * at once, twice (the second answer from the part kept for them), each a new one in every check.
 * @param {string} baseUrl @param {'anonymous' | 'returning' | 'new' | 'private' | 'stock'} kind
 * @param {BuildInfo} build
 * @returns {Promise<ScenarioCheck>}
 */
export async function checkPersonal(baseUrl, kind, build) {
  acceptEncoding = undefined;
  const personal = PATHS.personal;
  /** @type {string[]} */
  const problems = [];
  /** @type {ScenarioCheck} */
  const check = {
    valid: false,
    problems,
    notes: [],
    context: {},
    expectedStatuses: [200],
    minBytesPerResponse: 0,
  };
  // New visitors in every check, so that their first answers render their parts.
  const fresh = Math.random().toString(36).slice(2, 8);
  const visitors = [0, 1, 2].map((v) => sessionOf(v, 'c', fresh));
  const marker = partMarker(personal.showsText);
  const asks = visitors.map((sid, v) => ({
    sid,
    path: kind === 'private' ? personal.private.path : visitorPages(v)[v % 2],
    headers: kind === 'anonymous' ? {} : { cookie: `${personal.cookie}=${sid}` },
  }));
  const sizes = [];
  try {
    for (let round = 0; round < 2; round++) {
      const pages = await Promise.all(
        asks.map(({ path, headers }) =>
          checkRendered(baseUrl, path, build, problems, 200, headers),
        ),
      );
      pages.forEach((res, v) => {
        const { sid, path } = asks[v];
        const text = res.body.toString('utf8');
        const said = `GET ${path} for visitor ${sid}`;
        const cacheControl = String(res.headers['cache-control'] ?? '');
        const others = visitors.filter((other) => other !== sid);
        sizes.push(res.wireBytes);
        if (res.status !== 200) return;
        if (kind === 'private') {
          if (!text.includes(personal.private.shows(sid)))
            problems.push(`${said}: does not show "${personal.private.shows(sid)}"`);
          if (others.some((other) => text.includes(personal.private.shows(other))))
            problems.push(`${said}: shows another visitor's session`);
          if (!/\b(private|no-store)\b/.test(cacheControl))
            problems.push(`${said}: Cache-Control "${cacheControl}", not private`);
          return;
        }
        const own = occurrences(text, personal.shows(sid));
        // Without fixed text around the value, no other visitor's part can be told apart.
        const any = marker ? occurrences(text, marker) : own;
        if (any > own) problems.push(`${said}: holds another visitor's part ("${marker}…")`);
        if (kind === 'anonymous') {
          if (/\bprivate\b/.test(cacheControl))
            problems.push(`${said}: Cache-Control "${cacheControl}": not the shared page`);
        } else if (kind !== 'stock') {
          if (own === 0) problems.push(`${said}: no "${personal.shows(sid)}" (its own part)`);
          if (!/\bprivate\b/.test(cacheControl))
            problems.push(`${said}: Cache-Control "${cacheControl}", not private`);
        }
      });
    }
  } catch (error) {
    problems.push(`no answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  // A visitor's part that came too late leaves its placeholder: an answer as long as the shared
  // page, counted by the run (placeholders per response), not a truncated one.
  if ((kind === 'returning' || kind === 'new') && sizes.length) {
    try {
      sizes.push((await request(baseUrl, asks[0].path)).wireBytes);
    } catch (error) {
      problems.push(`no answer: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (kind === 'stock')
    check.notes.push(
      'no personal parts: every visitor gets the placeholder, the page rendered per request',
    );
  check.minBytesPerResponse = sizes.length ? Math.floor(Math.min(...sizes) * MIN_BYTES_SHARE) : 0;
  check.valid = problems.length === 0;
  return check;
}

/** A run in which nothing was answered (see answeredRun in load.mjs). */
export const NO_ANSWER = 'no response at all';

/**
 * Judges one load run by autocannon's own counts: any connection error or timeout, any status the
 * checks did not expect, or fewer bytes per response than the expected bodies, and the run is invalid.
 * @param {import('./load.mjs').LoadResult} result
 * @param {ScenarioCheck} check
 * @returns {string[]} the problems (empty when valid)
 */
export function judgeRun(result, check) {
  const problems = [];
  if (result.requests === 0) problems.push(NO_ANSWER);
  if (result.errors > 0)
    problems.push(`${result.errors} connection errors (${result.timeouts} timeouts)`);
  if (result.mismatches > 0) problems.push(`${result.mismatches} body mismatches`);
  const unexpected = Object.entries(result.statusCodes).filter(
    ([code]) => !check.expectedStatuses.includes(Number(code)),
  );
  if (unexpected.length > 0) {
    problems.push(
      `unexpected statuses: ${unexpected.map(([code, count]) => `${count}× ${code}`).join(', ')}`,
    );
  }
  if (check.rendersEach && (result.cacheHits ?? 0) > 0)
    problems.push(cacheHitsProblem(result.cacheHits, result.requests));
  const perResponse = result.requests > 0 ? result.bytes / result.requests : 0;
  if (result.requests > 0 && perResponse < check.minBytesPerResponse) {
    problems.push(
      `${Math.round(perResponse)} B per response, expected at least ${check.minBytesPerResponse} B (truncated bodies?)`,
    );
  }
  return problems;
}
