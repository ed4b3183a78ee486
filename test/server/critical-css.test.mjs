// Critical CSS from stylesheets compiled at startup must inline what CommonEngine's per-request
// Beasties pass inlines, for real pages of the tests' app (its stylesheet, test/app/src/styles.css,
// has the constructs that matter: :root variables, pseudo-classes, @media, @supports, @keyframes,
// @font-face, and rules no page uses).
import '@angular/compiler';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import postcss from 'postcss';
import { createCriticalCss } from '../../server/pages/critical-css.ts';
import { at, siteDirs } from '../helpers/origin.mjs';

const { browser: browserDir, server: serverDir } = siteDirs();
const app = await import(join(serverDir, 'main.server.mjs'));
const engine = new app.CommonEngine({ allowedHosts: ['localhost'] });
const inlineCriticalCss = createCriticalCss(browserDir);

const render = (url, inlineCriticalCssPerRequest) =>
  engine.render({
    bootstrap: app.default,
    documentFilePath: join(serverDir, 'index.server.html'),
    publicPath: browserDir,
    url: `http://localhost${at(url)}`,
    inlineCriticalCss: inlineCriticalCssPerRequest,
  });

/** The inlined stylesheet as a list of rules, each `selector{prop:value;…}`, whitespace normalized. */
function rulesOf(html) {
  const css = /<style>([^<]*)<\/style>/.exec(html)?.[1];
  assert.ok(css, 'no inlined critical CSS');
  const rules = [];
  postcss.parse(css).walk((node) => {
    if (node.type === 'rule') {
      const declarations = node.nodes
        .filter((d) => d.type === 'decl')
        .map(
          (d) =>
            `${d.prop}:${d.value.replace(/\s+/g, ' ').trim()}${d.important ? '!important' : ''}`,
        );
      const context =
        node.parent?.type === 'atrule' ? `@${node.parent.name} ${node.parent.params}|` : '';
      rules.push(`${context}${node.selector.replace(/\s+/g, ' ')}{${declarations.join(';')}}`);
    } else if (node.type === 'atrule' && !node.nodes?.some((child) => child.type === 'rule')) {
      rules.push(`@${node.name} ${node.params}`);
    }
  });
  return rules;
}

/**
 * The page without its critical stylesheet and Beasties' container mark, with empty attribute
 * values written the short way: the per-request pass re-serializes the whole document and may write
 * `<a attr>` where the page as rendered says `<a attr="">` (the same HTML).
 */
const markupOf = (html) =>
  html
    .replace(/<style>[^<]*<\/style>/, '<style></style>')
    .replace(' data-beasties-container', '')
    .replaceAll('=""', '');

describe('critical CSS from compiled stylesheets', () => {
  for (const url of [
    '/products/1',
    '/products/2',
    '/products/999999',
    '/no/such/page',
    '/products/abc',
  ]) {
    it(`inlines the same rules and markup as the per-request pass for ${url}`, async () => {
      const [perRequest, raw] = await Promise.all([render(url, true), render(url, false)]);
      const compiled = inlineCriticalCss(raw);
      const rules = rulesOf(compiled);
      assert.deepEqual(rules, rulesOf(perRequest));
      // A selection, not the whole stylesheet: what the page uses is in, what no page uses is out.
      assert.ok(
        rules.some((rule) => rule.startsWith(':root{')),
        'no :root rule',
      );
      assert.ok(
        rules.some((rule) => rule.startsWith('.site-header{')),
        'no .site-header rule',
      );
      assert.ok(
        !rules.some((rule) => rule.includes('fixture-unused')),
        'a rule no page uses was inlined',
      );
      assert.equal(markupOf(compiled), markupOf(perRequest));
    });
  }
});
