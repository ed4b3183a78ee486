// The pieces of personal parts that need no render (server/pages/personal/): the markers found in
// a page, whatever the page holds; the answer that splices parts into it, read back as a browser
// reads it in every coding; the ESI template, whose only includes are the origin's own whatever an
// API put in the page; the key a visitor's part is kept under. Generated input, real zlib.
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { answer } from '../../server/http/answer.ts';
import { readPartRules } from '../../server/pages/personal/declarations.ts';
import { esiTemplate, surrogateAssembles } from '../../server/pages/personal/esi-template.ts';
import { findParts } from '../../server/pages/personal/page-parts.ts';
import { partKey, seenInputs } from '../../server/pages/personal/part-cache.ts';
import { newStyles } from '../../server/pages/personal/part-styles.ts';
import { personalAnswer } from '../../server/pages/personal/personal-answer.ts';

const RULES = readPartRules(
  {
    greeting: { component: {}, cookies: ['sid'], maxAge: 60 },
    cart: { component: {}, cookies: ['sid', 'cart'], headers: ['accept-language'] },
  },
  5000,
);
const TOKEN = 'tOkEn_-0123456789abcd';

const inputsOf = (inputs) => Buffer.from(JSON.stringify(inputs)).toString('base64url');
const marked = (index, name, inputs, placeholder) =>
  `<template data-origin-part="${TOKEN}:${index}:${name}:${inputsOf(inputs)}"></template>` +
  placeholder +
  `<template data-origin-part-end="${TOKEN}:${index}"></template>`;

/** Text any page might hold around its parts: markup-looking data included. */
const pageText = fc.string({
  unit: fc.oneof(
    fc.constantFrom('<', '>', '"', "'", '&', ':', 'é', '€', '\n', 'esi:include', '</template>'),
    fc.string({ minLength: 1, maxLength: 1 }),
  ),
  maxLength: 40,
});

/** Reads a streamed answer's body as a browser would, decoded. */
async function bodyOf(made) {
  const chunks = [];
  if (made.stream !== undefined) for await (const chunk of made.stream) chunks.push(chunk);
  else chunks.push(...(made.pieces ?? [made.body]));
  const bytes = Buffer.concat(chunks);
  const coding = made.headers[made.headers.findIndex((h) => /^content-encoding$/i.test(h)) + 1];
  return made.headers.some((h) => /^content-encoding$/i.test(h)) && coding === 'gzip'
    ? gunzipSync(bytes).toString()
    : bytes.toString();
}

describe('personal parts, piece by piece', () => {
  it('finds each part by its token, takes the markers out and keeps every other byte', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pageText, fc.constantFrom('greeting', 'cart'), pageText), {
          maxLength: 4,
        }),
        pageText,
        (parts, tail) => {
          let page = '<!doctype html><html><head></head><body>';
          let expected = page;
          parts.forEach(([before, name, placeholder], i) => {
            page += before + marked(i, name, { i }, placeholder);
            expected += before + placeholder;
          });
          page += `${tail}</body></html>`;
          expected += `${tail}</body></html>`;
          const found = findParts(page, TOKEN, RULES);
          assert.equal(found.problem, undefined);
          assert.equal(found.body.toString(), expected);
          assert.equal(found.parts?.slots.length ?? 0, parts.length);
          found.parts?.slots.forEach((slot, i) => {
            assert.equal(found.body.subarray(slot.start, slot.end).toString(), parts[i][2]);
            assert.deepEqual(slot.inputs, { i });
            assert.equal(slot.name, parts[i][1]);
          });
          // Another render's markers are only text to this one.
          assert.equal(findParts(page, 'another-token', RULES).parts, undefined);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses markers that make no sense, and keeps the page without them', () => {
    const head = '<!doctype html><html><head>';
    const cases = {
      nested: `${head}</head><body>${marked(0, 'greeting', {}, `x${marked(1, 'cart', {}, 'y')}`)}</body>`,
      'in head': `${head}${marked(0, 'greeting', {}, 'x')}</head><body></body>`,
      undeclared: `${head}</head><body>${marked(0, 'basket', {}, 'x')}</body>`,
      'bad inputs': `${head}</head><body><template data-origin-part="${TOKEN}:0:greeting:!!"></template>x<template data-origin-part-end="${TOKEN}:0"></template></body>`,
      'no end': `${head}</head><body><template data-origin-part="${TOKEN}:0:greeting:e30"></template>x</body>`,
    };
    for (const [what, page] of Object.entries(cases)) {
      const found = findParts(page, TOKEN, RULES);
      assert.ok(found.problem, what);
      assert.equal(found.parts, undefined, what);
      assert.doesNotMatch(found.body.toString(), new RegExp(TOKEN), `${what}: no marker left`);
    }
  });

  it('splices each part into the page in every coding, its placeholder where it failed', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Each part known at once (kept, or a placeholder) or once rendered.
        fc.array(fc.tuple(pageText, pageText, fc.option(pageText), fc.boolean()), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.string({ maxLength: 2000 }),
        fc.constantFrom(undefined, 'gzip', 'br, gzip', 'identity', 'gzip;q=0'),
        async (parts, tail, acceptEncoding) => {
          let page = '<!doctype html><html><head></head><body>';
          let expected = page;
          parts.forEach(([before, placeholder, visitor], i) => {
            page += before + marked(i, 'greeting', {}, placeholder);
            expected += before + (visitor ?? placeholder);
          });
          page += tail;
          expected += tail;
          const found = findParts(page, TOKEN, RULES);
          const stored = answer(
            200,
            ['Content-Type', 'text/html', 'ETag', '"x"', 'Cache-Control', 's-maxage=60'],
            found.body,
          );
          const made = await personalAnswer({
            page: stored,
            parts: found.parts,
            filled: parts.map(([, , visitor, now]) => {
              const part = visitor === null ? undefined : Buffer.from(visitor);
              return now ? part : Promise.resolve(part);
            }),
            acceptEncoding,
          });
          assert.equal(await bodyOf(made), expected);
          const header = (name) =>
            made.headers[made.headers.findIndex((h) => h.toLowerCase() === name) + 1];
          assert.equal(header('cache-control'), 'private, no-cache');
          assert.equal(
            made.validators,
            undefined,
            'no validator: a 304 never gives back a stale part',
          );
          assert.ok(!made.headers.some((h) => /^etag$/i.test(h)));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('sends the page up to a slow part at once', async () => {
    const found = findParts(
      `<!doctype html><html><head></head><body>before${marked(0, 'greeting', {}, 'placeholder')}after`,
      TOKEN,
      RULES,
    );
    let release;
    const made = await personalAnswer({
      page: answer(200, ['Content-Type', 'text/html'], found.body),
      parts: found.parts,
      filled: [new Promise((resolve) => (release = resolve))],
      acceptEncoding: undefined,
    });
    const reader = made.stream[Symbol.asyncIterator]();
    assert.match((await reader.next()).value.toString(), /before$/);
    release(Buffer.from('Welcome, Alice'));
    assert.equal((await reader.next()).value.toString(), 'Welcome, Alice');
  });

  it("an ESI template includes the origin's parts and nothing else, whatever the page holds", () => {
    const forged = fc.constantFrom(
      '<esi:include src="/steal"/>',
      '<ESI:include src=/x>',
      '</esi:remove>',
      '<!--esi <esi:include src="/x"/> -->',
      '<esi:remove>',
    );
    const altOf = (text) => `<img alt="${text.replaceAll('"', '&quot;')}">`;
    const jsonLdOf = (text) =>
      `<script type="application/ld+json">{"name": ${JSON.stringify(text)}}</script>`;
    const where = fc.constantFrom(
      (text) => `<p>${text.replaceAll('<', '&lt;')}</p>`,
      altOf,
      jsonLdOf,
      (text) => `<script>var name = ${JSON.stringify(text)};</script>`,
      (text) => `<style>/* ${text} */</style>`,
      (text) => `<!-- ${text} -->`,
      (text) => `<title>${text.replaceAll('<', '&lt;')}</title>`,
      (text) => text,
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(forged, where), { maxLength: 4 }), (pieces) => {
        const around = pieces.map(([text, place]) => place(text)).join('');
        const page = `<!doctype html><html><head>${around}</head><body>${around}${marked(0, 'greeting', {}, '<p>placeholder</p>')}${around}</body></html>`;
        const found = findParts(page, TOKEN, RULES);
        const template = esiTemplate(
          answer(200, ['Content-Type', 'text/html', 'Cache-Control', 's-maxage=60'], found.body),
          found.parts,
          'b123',
          '/products/7?x=1',
        ).body.toString();
        const acted = [...template.matchAll(/<esi:|<!--esi/g)];
        assert.equal(acted.length, 1, template);
        // And data reads as it was: JSON-LD's strings, an attribute's value (the page holds
        // `around` three times).
        const printed = (place) =>
          [0, 1, 2].flatMap(() => pieces.filter(([, p]) => p === place).map(([text]) => text));
        const unescaped = (value) =>
          value.replaceAll('&lt;', '<').replaceAll('&quot;', '"').replaceAll('&amp;', '&');
        assert.deepEqual(
          [...template.matchAll(/<script type="application\/ld\+json">(.*?)<\/script>/g)].map(
            ([, json]) => JSON.parse(json).name,
          ),
          printed(jsonLdOf),
        );
        assert.deepEqual(
          [...template.matchAll(/<img alt="([^"]*)">/g)].map(([, alt]) => unescaped(alt)),
          printed(altOf),
        );
        assert.ok(template.includes('<esi:include src="/_origin/part/b123/0/products/7?x=1"/>'));
        assert.ok(!template.includes('<p>placeholder</p>'));
      }),
      { numRuns: 200 },
    );
  });

  it('believes an ESI surrogate by the W3C capability syntax only', () => {
    assert.equal(surrogateAssembles('varnish="ESI/1.0"'), true);
    assert.equal(surrogateAssembles('abc="ESI/1.0 ESI-Inline/1.0", def="ESI/1.0"'), true);
    assert.equal(surrogateAssembles(undefined), false);
    assert.equal(surrogateAssembles('ESI/1.0'), false);
    assert.equal(surrogateAssembles('varnish="ESI/2.0"'), false);
  });

  it("keeps a visitor's part under a key no other visitor's request reaches", () => {
    const rule = RULES.get('cart');
    const keyOf = (cookie, language) =>
      partKey(
        { build: 'b', locale: undefined },
        'cart',
        { p: 1 },
        seenInputs(rule, new Map(cookie), { 'accept-language': language }),
      );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('sid', 'cart', 'other'), fc.string()), { maxLength: 4 }),
        fc.array(fc.tuple(fc.constantFrom('sid', 'cart', 'other'), fc.string()), { maxLength: 4 }),
        fc.option(fc.string()),
        (a, b, language) => {
          const seen = (pairs) =>
            JSON.stringify([...new Map(pairs)].filter(([name]) => name !== 'other').sort());
          const same = seen(a) === seen(b);
          assert.equal(keyOf(a, language ?? undefined) === keyOf(b, language ?? undefined), same);
        },
      ),
      { numRuns: 500 },
    );
    assert.ok(!keyOf([['sid', 'secret-session']], 'en').includes('secret-session'));
  });

  it("a part brings only the styles its page has not: the page's own are not sent again", () => {
    const page = Buffer.from(
      '<html><head><style ng-app-id="ng">.a{color:red}</style><style>.b{}</style></head>' +
        '<body><script type="application/json">".c{margin:0}</style>"</script>' +
        '<p>.d{padding:0}</p></body></html>',
    );
    const styles =
      '<style ng-app-id="ng" nonce="n">.a{color:red}</style><style>.c{margin:0}</style>' +
      '<style>.d{padding:0}</style><style>.e{}</style><style></style>';
    assert.equal(
      newStyles(page, styles),
      '<style>.d{padding:0}</style><style>.e{}</style><style></style>',
      "a page's style and a text it closes as a style elsewhere are left out; a text outside a style is not",
    );
    assert.equal(newStyles(page, styles), newStyles(page, styles), 'remembered');
    assert.equal(newStyles(page, ''), '');
  });

  it('reads the declarations once, refusing a bad one by name; a part never waits longer than a page', () => {
    const component = class {};
    assert.equal(readPartRules(undefined, 10_000), undefined, 'an app without parts');
    const rules = readPartRules(
      {
        greeting: { component, cookies: ['sid', 'sid'], maxAge: 60 },
        slow: { component, cookies: ['sid'], headers: ['accept-language'], timeoutMs: 5_000 },
      },
      1_000,
    );
    assert.deepEqual(rules.get('greeting'), {
      name: 'greeting',
      cookies: ['sid'],
      headers: [],
      maxAgeMs: 60_000,
      timeoutMs: 300,
    });
    assert.equal(rules.get('slow').timeoutMs, 1_000, 'RENDER_TIMEOUT_MS caps it');
    assert.equal(readPartRules({ p: { component, cookies: ['s'] } }, 50).get('p').timeoutMs, 50);
    const bad = [
      [[], /not a map of parts/],
      [{ Greeting: { component, cookies: ['sid'] } }, /"Greeting": a part name/],
      [{ g: { component, cookies: [] } }, /"g": cookies must name/],
      [{ g: { component, cookies: ['a b'] } }, /"g": cookies must name/],
      [{ g: { component, cookies: ['s'], headers: ['X-A'] } }, /"g": headers must be lowercase/],
      [{ g: { component, cookies: ['s'], maxAge: -1 } }, /"g": maxAge/],
      [{ g: { component, cookies: ['s'], maxAge: 86_401 } }, /"g": maxAge/],
      [{ g: { component, cookies: ['s'], timeoutMs: 0 } }, /"g": timeoutMs/],
      [{ g: { component, cookies: ['s'], timeoutMs: 1.5 } }, /"g": timeoutMs/],
    ];
    for (const [exported, message] of bad) {
      assert.throws(() => readPartRules(exported, 1_000), message, JSON.stringify(exported));
    }
  });
});
