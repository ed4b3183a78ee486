// pageOf takes a page as CommonEngine gives it (a string) or as AngularNodeAppEngine's Response
// holds it (its UTF-8 bytes, passed on without a decode and a second encode). Either way the
// answer must be the same: body bytes, headers, validator, nonce slots.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ContentSecurityPolicy } from '../../server/csp/policy.ts';
import { pageOf } from '../../server/pages/page.ts';

/** Pages with the parts the nonce template rewrites, around any text (astral, combining, NUL). */
const page = fc
  .tuple(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }))
  .map(
    ([title, body]) =>
      `<html><head><title>${title}</title><style>a{}</style></head>` +
      `<body><app-root ng-version="22"><p>${body}</p></app-root>` +
      '<script id="ng-state" type="application/json">{}</script></body></html>',
  );

const output = (html, status, cacheControl) => ({
  html,
  status,
  headers: new Headers(cacheControl === undefined ? {} : { 'Cache-Control': cacheControl }),
});

/** A page made from its URL and declared inputs alone: its Cache-Control as the app gave it. */
const SHARED = { sees: 'declared', failed: false, vary: undefined };

describe('pageOf: a page as text or as its bytes', () => {
  const strict = { mode: 'strict', directives: new Map(), reportTo: undefined };
  for (const csp of [undefined, new ContentSecurityPolicy(strict)]) {
    it(`gives the same answer ${csp ? 'under a policy' : 'without CSP'}`, () => {
      fc.assert(
        fc.property(
          page,
          fc.constantFrom(200, 203, 404, 500),
          fc.constantFrom(undefined, 'public, max-age=60', 'no-store'),
          (html, status, cacheControl) => {
            const fromText = pageOf(output(html, status, cacheControl), SHARED, csp).page.answer;
            const fromBytes = pageOf(output(Buffer.from(html), status, cacheControl), SHARED, csp)
              .page.answer;
            assert.deepEqual(fromBytes.body, fromText.body);
            assert.deepEqual(fromBytes.headers, fromText.headers);
            assert.deepEqual(fromBytes.notModifiedHeaders, fromText.notModifiedHeaders);
            assert.deepEqual(fromBytes.validators, fromText.validators);
            assert.deepEqual(fromBytes.perResponse?.offsets, fromText.perResponse?.offsets);
          },
        ),
      );
    });
  }

  it('sends the bytes it was given as they are, tagged by their digest', () => {
    const bytes = Buffer.from('<html><body>café ✓ 𝄞</body></html>');
    const { answer } = pageOf(output(bytes, 200, undefined), SHARED).page;
    assert.equal(answer.body, bytes, 'no copy of the engine’s bytes');
    assert.match(answer.validators.etag, new RegExp(`^"${bytes.length.toString(16)}-`));
  });
});
