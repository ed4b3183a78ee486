// Command-line flags of `npm run bench`, with the defaults that fit a 2-core machine in < 10 minutes.
import { isAbsolute, join } from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_EQUAL_LOAD_RATE } from './report.mjs';
import { SCENARIO_NAMES, SKIPPED_SCENARIOS } from './scenarios.mjs';
import { DEFAULT_VARIANT_NAMES, ROOT, VARIANT_NAMES } from './variants.mjs';

// Renders need a longer warm-up than files: the render's CPU cost per response kept falling from
// ~9 to ~5.5 ms over six 4-s rounds after a 2-s warm-up (JIT), and stayed within ±7% after 20 s.
export const DEFAULTS = {
  connections: 50,
  duration: 4,
  rounds: 3,
  pipelining: 1,
  warmup: 2,
  'render-warmup': 10,
  'equal-load': 0.7,
  'paired-cpu': 0.3,
};
/** --quick: one short round, for a look or a smoke test (explicit flags still win). */
const QUICK = {
  rounds: 1,
  duration: 1,
  warmup: 0.5,
  'render-warmup': 0.5,
  'equal-load': 0,
  'paired-cpu': 0,
};

export const HELP = `Usage: npm run bench -- [options]

Starts every variant on a free loopback port, checks its answers, warms it up and loads it with
autocannon, one scenario at a time, in interleaved rounds. Prints a table and writes
bench/results/<timestamp>.json, .md and .svg.

  --variants a,b,…     variants to run (default: ${DEFAULT_VARIANT_NAMES.join(', ')};
                       ablations of the origin: ${VARIANT_NAMES.filter((name) => !DEFAULT_VARIANT_NAMES.includes(name)).join(', ')})
  --scenarios a,b,…    scenarios to run (default: all): ${SCENARIO_NAMES.join(', ')}
  --connections N      concurrent connections (default ${DEFAULTS.connections})
  --duration S         seconds per measured run (default ${DEFAULTS.duration})
  --rounds N           interleaved rounds (default ${DEFAULTS.rounds})
  --pipelining N       HTTP pipelining depth per connection (default ${DEFAULTS.pipelining})
  --warmup S           seconds of unmeasured load before a variant's first run of a scenario (default ${DEFAULTS.warmup})
  --render-warmup S    the same for scenarios that render pages (ssr, mixed): the render's JIT
                       warms up for longer (default ${DEFAULTS['render-warmup']})
  --equal-load F       after the rounds, as many rounds of open-loop runs at one constant rate per
                       scenario, F × the slowest variant's median (at most ${MAX_EQUAL_LOAD_RATE}/s; ssr-data: at
                       most 0.5), for latency at equal load and upstream requests per page
                       (default ${DEFAULTS['equal-load']}; 0 skips them)
  --paired-cpu F       with ssr and both variants of a pair (origin and ceiling, origin-app and
                       stock, origin and origin-nocache): as many rounds of the pair loaded
                       together on the same CPU, each at F × the slower one's ssr median, for
                       their CPU per render side by side (default ${DEFAULTS['paired-cpu']}, at most 0.5; 0 skips them)
  --quick              ${QUICK.rounds} round × ${QUICK.duration} s, ${QUICK.warmup} s warm-ups, no equal-load or paired runs (explicit flags win),
                       ssr-data's pages warmed by its burst alone
  --pin / --no-pin     pin the servers and the load generator to separate CPUs with taskset
                       (default: on when there are ≥ 2 CPUs and taskset works)
  --server-cpus LIST   the CPUs the servers are pinned to, as taskset takes them (default 1);
                       origin-cluster runs one worker per CPU listed (at least 2)
  --load-cpus LIST     the CPUs the load generator is pinned to (default 0); on a bigger machine,
                       e.g. --server-cpus 0-7 --load-cpus 8-15
  --out DIR            where to write the results (default bench/results)
  --update-readme      also replace the table between <!-- bench:start --> and <!-- bench:end --> in docs/benchmark.md
  --readme FILE        the file --update-readme writes (default docs/benchmark.md; bench/README.md holds the ablations)
  --skip-build         use the app's build (dist/, or angular.json's outputPath) and
                       dist-bench/stock/ as they are (still checks they match)
  --baseline DIR       also run 'baseline': the origin of another build of this project in DIR
                       (e.g. main before a change, built with ng build into DIR), beside 'origin'
                       in the same interleaved rounds; DIR must hold the same browser build
  --help               this text

Environment: LOAD_PATHS=FILE (the pages to load, instead of load-paths.json), BENCH_DIST=DIR (measure
the build in DIR instead of the app's, as it is), BENCH_STOCK_DIST=DIR (the stock server's build of the
same app, instead of dist-bench/stock/; needed with BENCH_DIST for stock). A localized build is
measured in the locale load-paths.json's pages are under (bench/README.md#a-localized-app).
`;

/**
 * @param {string[]} argv
 */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      variants: { type: 'string' },
      scenarios: { type: 'string' },
      connections: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      pipelining: { type: 'string' },
      warmup: { type: 'string' },
      'render-warmup': { type: 'string' },
      'equal-load': { type: 'string' },
      'paired-cpu': { type: 'string' },
      quick: { type: 'boolean', default: false },
      pin: { type: 'boolean' },
      'no-pin': { type: 'boolean' },
      'server-cpus': { type: 'string', default: '1' },
      'load-cpus': { type: 'string', default: '0' },
      out: { type: 'string' },
      'update-readme': { type: 'boolean', default: false },
      readme: { type: 'string', default: 'docs/benchmark.md' },
      'skip-build': { type: 'boolean', default: false },
      baseline: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const list = (value, known, what, defaults = known) => {
    if (value === undefined) return [...defaults];
    const names = value
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    for (const name of names) {
      const skipped = SKIPPED_SCENARIOS.find((scenario) => scenario.name === name);
      if (what === 'scenario' && skipped)
        throw new Error(`scenario "${name}" cannot run here: ${skipped.why}`);
      if (!known.includes(name))
        throw new Error(`unknown ${what} "${name}" (known: ${known.join(', ')})`);
    }
    if (names.length === 0) throw new Error(`--${what}s needs at least one name`);
    // Registry order, whatever order they were typed in: tables stay comparable.
    return known.filter((name) => names.includes(name));
  };
  const number = (name, { min, max = Infinity, integer }) => {
    const raw = values[name];
    const fallback = values.quick && name in QUICK ? QUICK[name] : DEFAULTS[name];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (
      !Number.isFinite(value) ||
      value < min ||
      value > max ||
      (integer && !Number.isInteger(value))
    ) {
      const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
      throw new Error(
        `--${name} must be ${integer ? 'a whole number' : 'a number'} ${range}, got "${raw}"`,
      );
    }
    return value;
  };
  if (values.pin && values['no-pin']) throw new Error('--pin and --no-pin contradict each other');
  const serverCpus = cpuList('server-cpus', values['server-cpus']);
  const loadCpus = cpuList('load-cpus', values['load-cpus']);
  const shared = serverCpus.filter((cpu) => loadCpus.includes(cpu));
  if (shared.length > 0)
    throw new Error(
      `--server-cpus and --load-cpus share CPU ${shared.join(', ')}: the load would steal the servers' time`,
    );
  const out = values.out ?? join(ROOT, 'bench/results');
  const baseline =
    values.baseline === undefined
      ? undefined
      : isAbsolute(values.baseline)
        ? values.baseline
        : join(process.cwd(), values.baseline);
  return {
    help: values.help,
    variants: [
      ...list(values.variants, VARIANT_NAMES, 'variant', DEFAULT_VARIANT_NAMES),
      ...(baseline === undefined ? [] : ['baseline']),
    ],
    baseline,
    scenarios: list(values.scenarios, SCENARIO_NAMES, 'scenario'),
    connections: number('connections', { min: 1, integer: true }),
    duration: number('duration', { min: 1, integer: true }),
    rounds: number('rounds', { min: 1, integer: true }),
    pipelining: number('pipelining', { min: 1, integer: true }),
    warmup: number('warmup', { min: 0, integer: false }),
    renderWarmup: number('render-warmup', { min: 0, integer: false }),
    // A share of the slowest variant's req/s.
    equalLoad: number('equal-load', { min: 0, max: 1, integer: false }),
    // Above 0.5 the pair together would ask for more than the one CPU they share.
    pairedCpu: number('paired-cpu', { min: 0, max: 0.5, integer: false }),
    quick: values.quick,
    /** true / false when asked, undefined for "decide from the machine" */
    pin: values.pin ? true : values['no-pin'] ? false : undefined,
    serverCpus: values['server-cpus'],
    serverCpuCount: serverCpus.length,
    loadCpus: values['load-cpus'],
    out: isAbsolute(out) ? out : join(process.cwd(), out),
    updateReadme: values['update-readme'],
    readme: isAbsolute(values.readme) ? values.readme : join(ROOT, values.readme),
    skipBuild: values['skip-build'],
  };
}

/** The CPUs of a taskset list ("0", "0,2", "4-7,9"), checked, so a typo fails before anything starts. */
function cpuList(name, text) {
  const cpus = new Set();
  for (const part of text.split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    const first = Number(match?.[1]);
    const last = Number(match?.[2] ?? match?.[1]);
    if (!match || last < first || last > 4095)
      throw new Error(`--${name} must be a CPU list such as 1 or 0-3,6, got "${text}"`);
    for (let cpu = first; cpu <= last; cpu++) cpus.add(cpu);
  }
  return [...cpus];
}
