// `node bench/compression-cost.mjs`: what compressing a page costs, per coding and level, on this
// app's own pages (the prerendered one, a rendered one fetched from the origin), in CPU time of this
// process (zlib's threads included) per call and per KB, and the bytes it leaves. The figures behind
// the levels in server/http/content-coding.ts and the nonced pages' choice (bench/README.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  brotliCompressSync,
  constants,
  crc32,
  deflateRawSync,
  gzipSync,
  zstdCompressSync,
} from 'node:zlib';
import { noncedAnswer } from '../server/csp/nonce-template.ts';
import { ContentSecurityPolicy } from '../server/csp/policy.ts';
import { request } from '../scripts/lib/http.mjs';
import { startOrigin } from '../scripts/lib/origin-process.mjs';
import { APP_DIST } from '../scripts/lib/paths.mjs';
import { renderedPathAt } from './lib/scenarios.mjs';

/** CPU µs per call of `run`, the median of five batches after a warm-up. */
function cpuPerCall(run, calls) {
  for (let i = 0; i < Math.max(3, calls / 5); i++) run();
  const batches = [];
  for (let batch = 0; batch < 5; batch++) {
    const started = process.cpuUsage();
    for (let i = 0; i < calls; i++) run();
    const { user, system } = process.cpuUsage(started);
    batches.push((user + system) / calls);
  }
  return batches.sort((a, b) => a - b)[2];
}

const br = (quality) => (body) =>
  brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
const gzip = (level) => (body) => gzipSync(body, { level });
const zstd = (level) => (body) =>
  zstdCompressSync(body, { params: { [constants.ZSTD_c_compressionLevel]: level } });

const CODECS = [
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 11].map((q) => [`br ${q}`, br(q)]),
  ...[1, 3, 4, 6, 9].map((l) => [`gzip ${l}`, gzip(l)]),
  ...[1, 3, 6, 9, 19].map((l) => [`zstd ${l}`, zstd(l)]),
];

function sweep(name, body) {
  console.log(`\n${name}: ${body.length.toLocaleString('en-US')} B\n`);
  console.log('| coding | bytes | share | CPU µs per call | µs per KB |');
  console.log('|---|--:|--:|--:|--:|');
  for (const [coding, compress] of CODECS) {
    const slow = /br (9|11)|zstd 19/.test(coding);
    const bytes = compress(body).length;
    const us = cpuPerCall(() => compress(body), slow ? 3 : 40);
    console.log(
      `| ${coding} | ${bytes.toLocaleString('en-US')} | ${(bytes / body.length).toFixed(3)} | ${us.toFixed(0)} | ${(us / (body.length / 1024)).toFixed(1)} |`,
    );
  }
}

/** A nonced page three ways: as it is, compressed per response, or deflated around its slots once. */
function noncedOptions(html) {
  const csp = new ContentSecurityPolicy({
    mode: 'strict',
    directives: new Map(),
    reportTo: undefined,
  });
  const { slots } = noncedAnswer(html, csp, 'no-cache');
  const fill = () => {
    const { value } = slots.next();
    const pieces = [];
    slots.segments.forEach((segment, i) => {
      pieces.push(segment);
      if (i < slots.segments.length - 1) pieces.push(value);
    });
    return Buffer.concat(pieces);
  };
  const identity = fill().length;
  console.log(
    `\nA nonced page (${slots.offsets.length} nonces, ${identity.toLocaleString('en-US')} B), per response:\n`,
  );
  console.log('| option | bytes | CPU µs per response |');
  console.log('|---|--:|--:|');
  console.log(
    `| as it is (identity) | ${identity.toLocaleString('en-US')} | ${cpuPerCall(fill, 200).toFixed(0)} |`,
  );
  for (const [name, compress] of [
    ['zstd 3 per response', zstd(3)],
    ['brotli 4 per response', br(4)],
    ['gzip 3 per response', gzip(3)],
  ]) {
    const bytes = compress(fill()).length;
    console.log(
      `| ${name} | ${bytes.toLocaleString('en-US')} | ${cpuPerCall(() => compress(fill()), 40).toFixed(0)} |`,
    );
  }
  // Each segment deflated once (level 9, dictionary reset between them), each nonce a stored block,
  // a gzip header and trailer: per response only the CRC of the page is computed.
  const segments = slots.segments.map((segment) => deflateRawSync(segment, { level: 9 }));
  const bytes = segments.reduce(
    (sum, segment) => sum + segment.length,
    18 + slots.offsets.length * 27,
  );
  const crc = () => {
    let value = 0;
    const { value: nonce } = slots.next();
    slots.segments.forEach((segment, i) => {
      value = crc32(segment, value);
      if (i < slots.segments.length - 1) value = crc32(nonce, value);
    });
    return value;
  };
  console.log(
    `| gzip blocks around the nonces (deflated once) | ${bytes.toLocaleString('en-US')} | ${cpuPerCall(crc, 200).toFixed(0)} |`,
  );
}

const prerendered = readFileSync(join(APP_DIST, 'browser/index.html'));
const origin = await startOrigin({ env: { RENDER_CACHE_BYTES: '0' } });
let rendered;
try {
  rendered = (await request(origin.url, renderedPathAt(0))).body;
} finally {
  await origin.stop();
}
console.log(
  `Node ${process.version}, brotli ${process.versions.brotli}, zlib ${process.versions.zlib}, zstd ${process.versions.zstd}`,
);
sweep(`A rendered page (${renderedPathAt(0)})`, rendered);
sweep('The prerendered page (dist/browser/index.html)', prerendered);
noncedOptions(rendered.toString());
