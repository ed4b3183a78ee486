// A real OpenTelemetry Collector for the tracing tests: no Debian package ships one, so it is built
// once from the Go module proxy with the collector's own builder (OTLP/HTTP receiver, batch
// processor, debug and file exporters: the smallest collector that writes spans where tests read
// them), and kept in the user's cache, so later runs start it at once. Started per test on a free
// loopback port, writing the spans it receives as JSON lines to a file of its own.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child-process.mjs';
import { freePort } from './ports.mjs';

/** The collector's version: known to build here (../shared/notes/facts.md). */
export const COLLECTOR_VERSION = '0.161.0';

const CACHE = join(
  process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'),
  'ssr-origin',
  `otelcol-${COLLECTOR_VERSION}`,
);

/** Where the built collector is, or OTELCOL_PATH's. */
export const OTELCOL = process.env['OTELCOL_PATH'] ?? join(CACHE, 'otelcol-origin-tests');

const MANIFEST = `dist:
  name: otelcol-origin-tests
  description: OpenTelemetry Collector for the origin's tracing tests
  output_path: ${CACHE}
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v${COLLECTOR_VERSION}
processors:
  - gomod: go.opentelemetry.io/collector/processor/batchprocessor v${COLLECTOR_VERSION}
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v${COLLECTOR_VERSION}
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v${COLLECTOR_VERSION}
`;

/**
 * Builds the collector when it is not there yet (about 200 s on 2 cores, once); returns an exit
 * code and says in one line why not, when Go is missing or the build fails.
 */
export function ensureCollector() {
  if (existsSync(OTELCOL)) {
    console.log(`Found the OpenTelemetry Collector: ${OTELCOL}`);
    return 0;
  }
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) {
    console.error(
      `No Go here: install Go (https://go.dev/dl/) to build the OpenTelemetry Collector the tracing tests run, or set OTELCOL_PATH to a collector with the otlp receiver and the file exporter.`,
    );
    return 1;
  }
  mkdirSync(CACHE, { recursive: true });
  const gobin = join(CACHE, 'bin');
  console.log(`Building the OpenTelemetry Collector ${COLLECTOR_VERSION} into ${CACHE} (once)…`);
  try {
    execFileSync(
      'go',
      ['install', `go.opentelemetry.io/collector/cmd/builder@v${COLLECTOR_VERSION}`],
      { env: { ...process.env, GOBIN: gobin }, stdio: 'inherit' },
    );
    const manifest = join(CACHE, 'manifest.yaml');
    writeFileSync(manifest, MANIFEST);
    execFileSync(join(gobin, 'builder'), ['--config', manifest], { stdio: 'inherit' });
  } catch (error) {
    console.error(`Building the OpenTelemetry Collector failed: ${error.message}`);
    return 1;
  }
  return existsSync(OTELCOL) ? 0 : 1;
}

/**
 * Starts the collector with an OTLP/HTTP receiver on a free loopback port; `spans()` reads what it
 * wrote so far (each span with its resource's attributes), `stop()` ends it and removes its files.
 */
export async function startCollector() {
  if (!existsSync(OTELCOL)) {
    throw new Error(`no OpenTelemetry Collector at ${OTELCOL}: run npm run setup:test`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'otelcol-'));
  const port = await freePort();
  const output = join(dir, 'spans.jsonl');
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
processors:
  batch:
    timeout: 50ms
exporters:
  file:
    path: ${output}
    flush_interval: 50ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [file]
`,
  );
  const child = startChild([OTELCOL, '--config', config], { keep: 64 * 1024 });
  try {
    await child.waitFor(/Everything is ready/, { stream: 'stderr', timeoutMs: 20_000 });
  } catch (error) {
    await child.stop({ graceMs: 0 });
    throw new Error(`the collector did not start: ${child.output()}`, { cause: error });
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    /** Every span written so far, flat: `{ name, kind, traceId, spanId, parentSpanId, attributes, links, status, resource }`. */
    spans: () => readSpans(output),
    stop: async () => {
      await child.stop({ graceMs: 2000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The OTLP JSON lines the file exporter writes, as flat spans with plain attribute values. */
function readSpans(file) {
  if (!existsSync(file)) return [];
  const spans = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    for (const resourceSpans of JSON.parse(line).resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            name: span.name,
            kind: span.kind,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link) => ({
              traceId: link.traceId,
              spanId: link.spanId,
            })),
            status: span.status ?? {},
            events: (span.events ?? []).map((event) => event.name),
            startNs: BigInt(span.startTimeUnixNano),
            endNs: BigInt(span.endTimeUnixNano),
            resource,
          });
        }
      }
    }
  }
  return spans;
}

function attributesOf(list = []) {
  return Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue ?? value,
    ]),
  );
}
