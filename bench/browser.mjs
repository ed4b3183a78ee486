// `npm run bench:browser`: what a visitor's phone sees. Chromium loads the app's prerendered page
// and a cached server-rendered page cold, on Lighthouse's mobile network, from this origin (over
// HTTP/2 with TLS, as a browser reaches it without a proxy, and over HTTP/1.1), the stock Angular
// server and, with --baseline, this origin as another build had it, in interleaved rounds; then
// the medians: bytes, first and largest contentful paint, time to hydration. With a page that has
// a personal part (load-paths.json's `personal`), that page for a signed-in visitor too, on every
// server that fills the part: when the part is first painted, with the origin filling it and with
// the part made in the browser after hydration, against the page's LCP. See bench/README.md.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { serveAppApiOf } from '../scripts/lib/app-api.mjs';
import { killChildren } from '../scripts/lib/child-process.mjs';
import { launchBrowser } from '../scripts/lib/chromium.mjs';
import { request } from '../scripts/lib/http.mjs';
import { makeCertificate } from '../scripts/lib/tls-certificate.mjs';
import { ensureBuilds } from './lib/build.mjs';
import { coldLoad, MOBILE_NETWORK } from './lib/browser-load.mjs';
import { browserMarkdown, browserSummary, browserTerminal } from './lib/browser-report.mjs';
import { describeMachine } from './lib/machine.mjs';
import { measuredSite } from './lib/measured-site.mjs';
import { installCleanup, startServer } from './lib/process.mjs';
import { updateReadme } from './lib/readme.mjs';
import { roundOrder } from './lib/round-order.mjs';
import { PATHS, renderedPathAt } from './lib/scenarios.mjs';
import { baselineVariant, DIST, READY_LINE, ROOT, getVariant } from './lib/variants.mjs';

const HELP = `Usage: npm run bench:browser -- [options]

  --variants a,b,…   origin (HTTP/2, TLS), origin-http1, origin-app (RENDER_ENGINE=app, HTTP/2), stock,
                     baseline (needs --baseline) (default: origin,origin-http1,stock, and baseline with --baseline)
  --rounds N         interleaved rounds, every page of every variant once each (default 7)
  --baseline DIR     this origin from another build (its output folder, e.g. ../main/dist)
  --quick            one round: a look, or the smoke test
  --update-readme    write the table into docs/benchmark.md (between its browser-bench markers)
  --skip-build       use dist/ and dist-bench/stock/ as they are
  --out DIR          where the JSON and Markdown go (default bench/results)
  --time-limit S     stop starting loads after S seconds, report what was measured (default 1200)
`;

const { values } = parseArgs({
  options: {
    variants: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    baseline: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'update-readme': { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench/results') },
    'time-limit': { type: 'string', default: '1200' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}

/** The variants a browser compares: how each starts and how the browser reaches it. */
function variantsOf(names, certificate) {
  const https = { ...certificate.env };
  const all = {
    origin: { ...getVariant('origin'), tls: https, label: 'this origin, HTTP/2 (TLS)' },
    'origin-http1': { ...getVariant('origin'), tls: undefined, label: 'this origin, HTTP/1.1' },
    'origin-app': {
      ...getVariant('origin-app'),
      tls: https,
      label: 'this origin, RENDER_ENGINE=app, HTTP/2 (TLS)',
    },
    'origin-nohints': {
      ...getVariant('origin'),
      env: { ...getVariant('origin').env, EARLY_HINTS: 'off' },
      tls: https,
      label: 'this origin, HTTP/2 (TLS), EARLY_HINTS=off',
    },
    stock: { ...getVariant('stock'), tls: undefined, label: 'stock Angular server (HTTP/1.1)' },
    ...(values.baseline && {
      baseline: {
        ...baselineVariant(resolve(values.baseline)),
        tls: undefined,
        label: `this origin before the change (${values.baseline}, HTTP/1.1)`,
      },
    }),
  };
  return names.map((name) => {
    if (!all[name])
      throw new Error(`unknown variant "${name}" (known: ${Object.keys(all).join(', ')})`);
    return { ...all[name], name };
  });
}

async function main() {
  installCleanup();
  const rounds = values.quick ? 1 : Number(values.rounds);
  const names = (
    values.variants ?? `origin,origin-http1,stock${values.baseline ? ',baseline' : ''}`
  ).split(',');
  const deadline = Date.now() + Number(values['time-limit']) * 1000;
  ensureBuilds({ stock: names.includes('stock'), skip: values['skip-build'], log: console.log });
  if (values.baseline && !existsSync(join(values.baseline, 'server/server.mjs'))) {
    throw new Error(`--baseline ${values.baseline} holds no server/server.mjs`);
  }
  const certificate = makeCertificate();
  const variants = variantsOf(names, certificate);
  const pages = [PATHS.prerendered, renderedPathAt(6)];
  const personal = PATHS.personal && personalPages(PATHS.personal);
  // The bench's own certificate, trusted by its key: Chromium then caches and reuses what a 103
  // fetched, as with a certificate a CA signed (--ignore-certificate-errors would not).
  const browser = await launchBrowser({ certificate });
  // Pages made of data fetch the app's API: one for every variant, at the same address (the stock
  // server has none of its own), as the main bench serves it.
  const api = await serveAppApiOf((await measuredSite(DIST)).serverDir);
  const servers = new Map();
  try {
    for (const variant of variants) {
      const server = await startServer({
        command: variant.command(),
        env: { ...variant.env, ...variant.tls, ...(api && { API_URL: api.url }) },
        cwd: ROOT,
        ready: READY_LINE,
        scheme: variant.tls ? 'https' : 'http',
      });
      servers.set(variant.name, server);
      // The rendered page is a cached one: in the render cache before the first measured load
      // (the stock server has none and renders every load).
      await request(server.url, pages[1]);
      if (personal) {
        // The personal page is a cached one too; the server fills the part, or is left out of
        // its rows (the stock server, a build from before personal parts).
        const { name, value } = PATHS.personal.cookieOf(0);
        const answer = await request(server.url, PATHS.personal.path, {
          headers: { cookie: `${name}=${value}` },
        });
        const shows = PATHS.personal.shows(value);
        if (answer.text.includes(shows)) personal.variants.add(variant.name);
        else
          console.log(
            `${variant.name}: no part showing "${shows}" in ${PATHS.personal.path} for ${name}=${value}: not measured signed in`,
          );
      }
    }
    const measured = [...pages, ...(personal?.pages ?? [])];
    const loads = [];
    let visitors = 0;
    for (let round = 0; round < rounds && Date.now() < deadline; round++) {
      for (const page of measured) {
        const visit = personal?.visits.get(page);
        for (const variant of roundOrder(variants, round)) {
          if (Date.now() >= deadline) break;
          if (visit && !personal.variants.has(variant.name)) continue;
          const path = visit ? PATHS.personal.path : page;
          // Each signed-in load is a new visitor: the origin renders their part, none is kept.
          const cookie = visit && PATHS.personal.cookieOf(++visitors);
          const visitor = visit && { ...visit, cookie, shows: PATHS.personal.shows(cookie.value) };
          const seen = await coldLoad(browser, `${servers.get(variant.name).url}${path}`, {
            visitor,
          });
          loads.push({ round, page, variant: variant.name, ...seen });
          console.log(
            `round ${round + 1}/${rounds} ${page.padEnd(14)} ${variant.name.padEnd(13)} ` +
              `${(seen.bytes / 1000).toFixed(0)} kB, FCP ${seen.fcp?.toFixed(0)} ms, LCP ${seen.lcp?.toFixed(0)} ms, ` +
              `hydrated ${seen.hydrated.toFixed(0)} ms, ${seen.protocol}, ${seen.earlyHints} from a 103` +
              (seen.part === undefined ? '' : `, part ${seen.part.toFixed(0)} ms`),
          );
        }
      }
    }
    report({ variants, pages: measured, loads, rounds, personal });
  } finally {
    await browser.close();
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await api?.close();
    certificate.remove();
  }
}

/**
 * The personal page's two ways, each a page of the report: the origin fills the part (the visitor's
 * cookie goes with the page's request), or the part is made in the browser (the cookie is set by a
 * script once the page has come, as the shared page without it).
 * @param {import('../scripts/lib/load-paths.mjs').PersonalPages} personal
 */
function personalPages({ path }) {
  const filled = `${path} signed in`;
  const inBrowser = `${path} signed in, part in the browser`;
  return {
    filled,
    inBrowser,
    pages: [filled, inBrowser],
    visits: new Map([
      [filled, { by: 'request' }],
      [inBrowser, { by: 'script' }],
    ]),
    /** The variants that fill the part (the others are not measured signed in). */
    variants: new Set(),
  };
}

function report({ variants, pages, loads, rounds, personal }) {
  const summary = browserSummary({ variants, pages, loads, personal });
  console.log(`\n${browserTerminal(summary)}`);
  const machine = describeMachine();
  const when = new Date();
  const stamp = when.toISOString().replace(/[:.]/g, '-').slice(0, 19) + 'Z';
  mkdirSync(values.out, { recursive: true });
  const base = join(values.out, `browser-${stamp}`);
  const context = {
    when,
    machine,
    rounds,
    network: MOBILE_NETWORK,
    file: relative(ROOT, `${base}.json`),
  };
  const markdown = browserMarkdown(summary, context);
  writeFileSync(
    `${base}.json`,
    JSON.stringify(
      {
        ...context,
        variants,
        pages,
        personal: personal && {
          ...PATHS.personal,
          filled: personal.filled,
          inBrowser: personal.inBrowser,
          variants: [...personal.variants],
        },
        loads,
        summary,
      },
      null,
      2,
    ),
  );
  writeFileSync(`${base}.md`, markdown);
  console.log(`\nWrote ${relative(ROOT, base)}.json and .md`);
  if (values['update-readme']) {
    updateReadme(join(ROOT, 'docs/benchmark.md'), markdown, {
      marker: 'browser-bench',
      command: 'npm run bench:browser -- --update-readme',
    });
    console.log('Updated the browser table in docs/benchmark.md');
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    killChildren();
    process.exit(1);
  },
);
