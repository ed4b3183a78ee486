// The nonce template (server/csp/) on its own: which tags get the placeholder, what is stored, and
// what one response gets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { nonceTemplate, templateEtag } from '../../server/csp/nonce-template.ts';
import { ContentSecurityPolicy } from '../../server/csp/policy.ts';
import { answer as answerOf, writeAnswer } from '../../server/http/answer.ts';
import { pageOf } from '../../server/pages/page.ts';

const policy = () =>
  new ContentSecurityPolicy({ mode: 'strict', directives: new Map(), reportTo: undefined });

/** A response that records what writeAnswer writes. */
function recorder() {
  const sent = {};
  const chunks = [];
  return {
    sent,
    res: {
      writeHead: (status, headers) => Object.assign(sent, { status, headers }),
      getHeaderNames: () => [],
      cork: () => {},
      uncork: () => {},
      write: (chunk) => chunks.push(chunk),
      end: (chunk) => {
        if (chunk) chunks.push(chunk);
        sent.body = Buffer.concat(chunks);
      },
    },
  };
}

describe('nonce template', () => {
  it('stores placeholders, and each answer of a stored page gets its own nonce', () => {
    const csp = policy();
    const html =
      '<html><head><style>a{}</style><script src="m.js" type="module"></script></head>' +
      '<body><app-root ng-version="22"><p>hi</p></app-root><script id="ng-state" type="application/json">{}</script></body></html>';
    const { answer: page } = pageOf(
      { html, status: 200, headers: new Headers() },
      { sees: 'declared', failed: false, vary: undefined },
      csp,
    ).page;
    const stored = Buffer.from(page.body);
    assert.equal(page.perResponse.offsets.length, 4, 'style, script, root, ng-state');
    const answers = [recorder(), recorder()];
    for (const { res } of answers) {
      writeAnswer({ headers: {}, method: 'GET' }, res, page);
    }
    const nonces = answers.map(({ sent }) => {
      const header = sent.headers[sent.headers.indexOf('Content-Security-Policy') + 1];
      return /'nonce-([^']+)'/.exec(header)[1];
    });
    assert.notEqual(nonces[0], nonces[1]);
    assert.deepEqual(page.body, stored, 'the stored page changed');
    for (const nonce of nonces) {
      assert.ok(!page.body.includes(nonce), 'a served nonce in the stored page');
    }
    assert.equal(page.body.toString().split(csp.placeholder).length - 1, 4);
    answers.forEach(({ sent }, i) => {
      assert.equal(sent.body.toString().split(nonces[i]).length - 1, 4);
      assert.ok(!sent.body.includes(csp.placeholder), 'the placeholder was served');
    });
    // A 304 carries no policy.
    const revalidation = recorder();
    writeAnswer(
      { headers: { 'if-none-match': page.validators.etag }, method: 'GET' },
      revalidation.res,
      page,
    );
    assert.equal(revalidation.sent.status, 304);
    assert.ok(!revalidation.sent.headers.includes('Content-Security-Policy'));
  });

  it('gives the same weak ETag to a page in every process, whatever its placeholder', () => {
    const html = '<html><head><script>1</script></head><body><app-root></app-root></body></html>';
    const [a, b] = [policy(), policy()].map((csp) => nonceTemplate(html, csp));
    assert.notEqual(a.body.toString(), b.body.toString());
    assert.equal(templateEtag(a.body, a.slots), templateEtag(b.body, b.slots));
    assert.match(templateEtag(a.body, a.slots), /^W\/"/);
  });

  it('property: tags outside the root element get the nonce, markup inside it never does', () => {
    const tag = fc.constantFrom(
      '<script>x()</script>',
      '<script src="a.js" type="module"></script>',
      '<style>a{b:c}</style>',
      '<link rel="modulepreload" href="c.js">',
      '<script>if (a<b && "</div>") {}</script>',
      '<!-- <script>commented</script> -->',
      '<meta name="x" content="a>b">',
    );
    const attack = fc.constantFrom(
      '<script>evil()</script>',
      '<style>body{display:none}</style>',
      '<link rel="stylesheet" href="//evil">',
      '<script nonce="guessed">evil()</script>',
      '</app-root><script>evil()</script>',
      '<app-root><script>evil()</script></app-root>',
      '<p>text</p>',
    );
    fc.assert(
      fc.property(
        fc.array(tag),
        fc.array(tag),
        fc.array(attack),
        fc.array(tag),
        (head, bodyStart, inside, bodyEnd) => {
          const csp = policy();
          const html =
            `<!doctype html><html><head>${head.join('')}</head><body>${bodyStart.join('')}` +
            `<app-root ng-version="22">${inside.join('')}</app-root>${bodyEnd.join('')}</body></html>`;
          const { body, slots } = nonceTemplate(html, csp);
          const { sent, res } = recorder();
          writeAnswer(
            { headers: {}, method: 'GET' },
            res,
            answerOf(200, [], body, { perResponse: slots }),
          );
          const { body: answer, headers } = sent;
          const header = headers[headers.indexOf('Content-Security-Policy') + 1];
          const nonce = /'nonce-([^']+)'/.exec(header)[1];
          const text = answer.toString();
          const rootStart = text.indexOf('<app-root');
          const rootEnd = text.lastIndexOf('</app-root>');
          const outside = text.slice(0, rootStart) + text.slice(rootEnd);
          const withoutComments = outside.replace(/<!--[\s\S]*?-->/g, '');
          for (const [open] of withoutComments.matchAll(/<(?:script|style|link)\b[^>]*>/g)) {
            assert.ok(open.includes(` nonce="${nonce}"`), open);
          }
          assert.ok(
            !text
              .slice(rootStart, rootEnd)
              .replace(/^<app-root[^>]*>/, '')
              .includes(nonce),
          );
          assert.equal(answer.length, body.length);
        },
      ),
    );
  });
});
