// Accept-Encoding read as RFC 9110 §12.5.3 says, in process, with generated headers: the choice is
// always one the answer has (or identity), q-values decide and ties go to the origin's order,
// identity is what a client gets that asks for nothing acceptable, and members that do not parse
// change nothing. Then when an answer is compressed at all (answer() in server/http/answer.ts), and
// a nonced page compressed per response.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import fc from 'fast-check';
import { answer, writeAnswer } from '../../server/http/answer.ts';
import { compressForStore, negotiate } from '../../server/http/content-coding.ts';
import { representationFor } from '../../server/http/encodings.ts';
import { noncedAnswer } from '../../server/csp/nonce-template.ts';
import { ContentSecurityPolicy } from '../../server/csp/policy.ts';

const CODINGS = ['br', 'gzip', 'zstd'];
const NAMES = [...CODINGS, 'identity', '*', 'deflate', 'compress'];
const qvalue = fc.constantFrom(0, 0.001, 0.1, 0.5, 0.9, 0.999, 1);
const available = fc
  .subarray(CODINGS)
  .chain((codings) => fc.shuffledSubarray(codings, { minLength: codings.length }));
/** A well-formed header from distinct (name, q) pairs, q left out for some (then 1). */
const members = fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.option(qvalue)), {
  selector: ([name]) => name,
  maxLength: 6,
});
const spell = (list, { separator = ', ', caps = false } = {}) =>
  list
    .map(([name, q]) => (caps ? name.toUpperCase() : name) + (q === null ? '' : `;q=${q}`))
    .join(separator);

/** What RFC 9110 asks of the choice, computed from the pairs themselves, not from a header. */
function expectedChoice(list, offered) {
  const q = new Map(list.map(([name, weight]) => [name, weight ?? 1]));
  const weight = (name) => q.get(name) ?? q.get('*') ?? 0;
  let best;
  for (const coding of offered) {
    if (weight(coding) > (best === undefined ? 0 : weight(best))) best = coding;
  }
  if (best === undefined) return undefined;
  const identity = q.get('identity') ?? q.get('*') ?? 0;
  return weight(best) >= identity ? best : undefined;
}

describe('Accept-Encoding', () => {
  it('chooses by q-value, ties in the origin’s order, identity when nothing is acceptable', () => {
    fc.assert(
      fc.property(
        members,
        available,
        fc.boolean(),
        fc.constantFrom(',', ', ', ' ,\t'),
        (list, offered, caps, separator) => {
          const header = spell(list, { caps, separator });
          assert.equal(negotiate(header, offered), expectedChoice(list, offered), header);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('ignores members that do not parse, wherever they are', () => {
    const garbage = fc.oneof(
      fc.constantFrom(
        'br;q=2',
        'gzip;q=-1',
        'zstd;q=0.5x',
        'br;level=1',
        ';q=1',
        'gz ip',
        '"br"',
        'br;q=1.0001',
      ),
      // Commas go before the filter: ',*' without its comma is '*', a member that parses.
      fc
        .string({ maxLength: 10 })
        .map((text) => text.replaceAll(',', ''))
        .filter((text) => !/^[\w*-]*(;q=[\d.]*)?$/.test(text.trim())),
    );
    fc.assert(
      fc.property(
        members,
        available,
        fc.array(garbage, { maxLength: 4 }),
        fc.nat(),
        (list, offered, junk, at) => {
          const parts = list.map(([name, q]) => name + (q === null ? '' : `;q=${q}`));
          parts.splice(at % (parts.length + 1), 0, ...junk);
          assert.equal(
            negotiate(parts.join(', '), offered),
            expectedChoice(list, offered),
            parts.join(', '),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws, and answers any string with one of the offered codings or identity', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ maxLength: 60, unit: 'binary' })),
        available,
        (header, offered) => {
          const choice = negotiate(header, offered);
          assert.ok(choice === undefined || offered.includes(choice));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads the cases the RFC spells out', () => {
    const all = ['br', 'gzip', 'zstd'];
    const cases = [
      [undefined, undefined, 'no header: identity'],
      ['', undefined, 'empty: no coding wanted'],
      ['identity', undefined, 'asked for identity'],
      ['identity;q=0', undefined, 'nothing acceptable: identity all the same'],
      ['*;q=0', undefined, 'nothing acceptable'],
      ['*', 'br', 'anything: the origin’s first'],
      ['*;q=0.5, identity', undefined, 'identity preferred'],
      ['gzip;q=0, *', 'br'],
      ['x-gzip', 'gzip', 'x-gzip is gzip'],
      ['GZIP;Q=0.5', 'gzip', 'case-insensitive'],
      ['br;q=0.5, br;q=0', 'br', 'a name twice: the first weight'],
      ['deflate', undefined, 'a coding the origin does not send'],
    ];
    for (const [header, expected, why] of cases) {
      assert.equal(negotiate(header, all), expected, why ?? header);
    }
  });

  it('parses an enormous header in bounded time', () => {
    const huge = `${'x;q=0.5, '.repeat(20_000)}gzip`;
    const started = performance.now();
    assert.equal(negotiate(huge, ['br', 'gzip']), 'gzip');
    // Generous: a linear pass over 180 kB; a pathological regex would take seconds.
    assert.ok(performance.now() - started < 2000);
  });
});

describe('what is compressed', () => {
  const page = Buffer.from(`<!doctype html><p>${'hello compression '.repeat(200)}</p>`);
  const html = ['Content-Type', 'text/html; charset=utf-8', 'ETag', '"1-abc"'];

  it('compresses text of a useful size, and says Vary', () => {
    const made = answer(200, html, page, { validators: { etag: '"1-abc"' } });
    assert.equal(made.compressOnSend, true);
    assert.deepEqual(made.headers.slice(-4), [
      'Vary',
      'Accept-Encoding',
      'Content-Length',
      String(page.length),
    ]);
    assert.deepEqual(made.notModifiedHeaders, ['ETag', '"1-abc"', 'Vary', 'Accept-Encoding']);
  });

  it('leaves compressed types, small bodies, coded bodies and no-transform alone', () => {
    for (const headers of [
      ['Content-Type', 'image/png'],
      ['Content-Type', 'font/woff2'],
      ['Content-Type', 'application/zip'],
      [...html, 'Content-Encoding', 'br'],
      [...html, 'Cache-Control', 'public, max-age=60, no-transform'],
    ]) {
      const made = answer(200, headers, page);
      assert.equal(made.compressOnSend, false, headers.join(' '));
      assert.ok(!made.headers.includes('Vary'), headers.join(' '));
    }
    assert.equal(answer(200, html, Buffer.from('<p>tiny</p>')).compressOnSend, false);
  });

  it('adds Accept-Encoding to the app’s own Vary', () => {
    const made = answer(200, [...html, 'Vary', 'Cookie'], page);
    assert.equal(made.headers[made.headers.indexOf('Vary') + 1], 'Cookie, Accept-Encoding');
  });

  it('compresses a nonced page per response: its nonce in the body and the policy alike', () => {
    const csp = new ContentSecurityPolicy({
      mode: 'strict',
      directives: new Map(),
      reportTo: undefined,
    });
    const template = `<!doctype html><html><head><script src="main.js"></script><style>${'p{color:red}'.repeat(300)}</style></head><body><app-root></app-root></body></html>`;
    const nonced = noncedAnswer(template, csp, 'no-cache');
    const made = answer(
      200,
      ['Content-Type', 'text/html; charset=utf-8', ...nonced.headers],
      nonced.body,
      {
        validators: { etag: nonced.etag },
        perResponse: nonced.slots,
      },
    );
    for (const [coding, decode] of [
      ['zstd', zstdDecompressSync],
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ]) {
      const sent = send(made, coding);
      assert.equal(sent.headers['content-encoding'], coding);
      assert.match(
        sent.headers.etag,
        new RegExp(`^W/".*-${coding}"$`),
        'weak, and names the coding',
      );
      const body = decode(sent.body).toString();
      const nonce = /'nonce-([\w-]+)'/.exec(sent.headers['content-security-policy'])[1];
      assert.ok(body.includes(`<script src="main.js" nonce="${nonce}">`), body.slice(0, 120));
      assert.equal(Number(sent.headers['content-length']), sent.body.length);
      assert.notEqual(
        send(made, coding).headers['content-security-policy'],
        sent.headers['content-security-policy'],
      );
    }
    assert.equal(representationFor(made, 'identity'), made);
  });
});

/** What writeAnswer sends for `made` to a GET accepting `coding`: headers (lower-case) and body. */
function send(made, coding) {
  const written = { headers: {}, chunks: [] };
  const res = {
    writeHead(status, list) {
      written.status = status;
      for (let i = 0; i < list.length; i += 2) written.headers[list[i].toLowerCase()] = list[i + 1];
    },
    write: (chunk) => written.chunks.push(Buffer.from(chunk)),
    end: (chunk) => chunk && written.chunks.push(Buffer.from(chunk)),
    cork() {},
    uncork() {},
  };
  writeAnswer({ method: 'GET', headers: { 'accept-encoding': coding } }, res, made);
  return { status: written.status, headers: written.headers, body: Buffer.concat(written.chunks) };
}

describe('pages compressed for the store', () => {
  const page = Buffer.from('<p>a page the render cache keeps</p>'.repeat(2000));
  const decoded = { br: brotliDecompressSync, gzip: gunzipSync };

  it('gives every page its stored codings when they come one after another', async () => {
    for (let i = 0; i < 12; i++) {
      const bodies = await compressForStore(page);
      assert.deepEqual(
        bodies.map(([coding]) => coding),
        ['br', 'gzip'],
      );
      for (const [coding, body] of bodies) assert.ok(decoded[coding](body).equals(page), coding);
    }
  });

  it('keeps a burst to a queue of eight: the rest are kept as they are, never wrong', async () => {
    const all = await Promise.all(Array.from({ length: 40 }, () => compressForStore(page)));
    const compressed = all.filter((bodies) => bodies !== undefined);
    assert.equal(compressed.length, 8, 'eight waited their turn, the others were not queued');
    for (const bodies of compressed)
      for (const [coding, body] of bodies) assert.ok(decoded[coding](body).equals(page), coding);
    assert.notEqual(await compressForStore(page), undefined, 'and the queue empties');
  });
});
