// The steps a user takes after `ng add`, as the docs the app got show them (its own docs/), applied
// to the persona app by script: the code comes out of the docs' code blocks, verbatim where a block
// is a whole file, cut at its route objects where it is a fragment. What does not compile in the
// adopted app fails the app's build.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The code blocks of a Markdown text, each with the text before it. */
function codeBlocks(markdown) {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1],
    code: match[2],
    before: markdown.slice(0, match.index),
  }));
}

/** The first code block after `marker` (a heading or a sentence of the doc). */
function blockAfter(markdown, marker) {
  const at = markdown.indexOf(marker);
  if (at === -1) throw new Error(`the doc no longer says ${JSON.stringify(marker)}`);
  const block = codeBlocks(markdown).find(({ before }) => before.length > at);
  if (!block) throw new Error(`no code block after ${JSON.stringify(marker)}`);
  return block.code;
}

/** The object literal of a route (`{ … path: 'x', … }`) in a block, braces balanced. */
function routeObject(code, path) {
  const at = code.indexOf(`path: '${path}'`);
  if (at === -1) throw new Error(`no route ${path} in the doc's block:\n${code}`);
  const start = code.lastIndexOf('{', at);
  let depth = 0;
  for (let i = start; i < code.length; i++) {
    if (code[i] === '{') depth++;
    if (code[i] === '}' && --depth === 0) return code.slice(start, i + 1);
  }
  throw new Error(`unbalanced route ${path}`);
}

/** The import lines of a block. */
const importsOf = (code) => code.split('\n').filter((line) => line.startsWith('import '));

function edit(app, path, change) {
  const file = join(app, path);
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${path}: the step changed nothing`);
  writeFileSync(file, after);
}

function create(app, path, text) {
  mkdirSync(dirname(join(app, path)), { recursive: true });
  writeFileSync(join(app, path), text);
}

/**
 * The persona made production-ready as its docs show:
 * - its product page shared per currency (docs/your-app.md, "Pages for every visitor"): the
 *   route's Cache-Control and renderInputs() from the doc's block, the currency read with
 *   requestCookie(); its cache groups with addCacheGroups() (docs/revalidation.md);
 * - the guide's recipe page (docs/your-app.md): its data and component files as the doc gives them,
 *   its routes cut from the doc's blocks, and the router's input binding the guide relies on;
 * - load-paths.json naming its pages (docs/your-app.md, "load-paths.json").
 * The product page keeps reading `sid` from REQUEST, as it did under Express.
 */
export function applyDocsSteps(app) {
  const yourApp = readFileSync(join(app, 'docs/your-app.md'), 'utf8');
  const revalidation = readFileSync(join(app, 'docs/revalidation.md'), 'utf8');

  // Pages for every visitor: the product route shared per currency.
  const shared = blockAfter(yourApp, '**A page that depends on a cookie or a header**');
  const currency = /import \{ CURRENCY \} from '\.\/currency'; \/\/ (\{.*\})/.exec(shared)?.[1];
  if (!currency) throw new Error("the doc's block no longer shows what CURRENCY is");
  create(
    app,
    'src/app/currency.ts',
    `import type { RenderInput } from './render-inputs';\n\nexport const CURRENCY: RenderInput<'EUR' | 'USD' | 'GBP'> = ${currency};\n`,
  );
  // The recipe's server route, from the guide's block.
  const serverRoutes = blockAfter(yourApp, '## The server route: render mode and cache policy');
  edit(app, 'src/app/app.routes.server.ts', (text) =>
    [
      ...importsOf(shared).filter((line) => !text.includes(line)),
      text.replace(
        "  { path: 'products/:id', renderMode: RenderMode.Server },",
        `  ${routeObject(shared, 'products/:id')},\n  ${routeObject(serverRoutes, 'recipes/:slug')},`,
      ),
    ].join('\n'),
  );

  // The product page reads its currency as the origin normalizes it, and names its cache groups.
  const groups = blockAfter(revalidation, "with the app's helper `addCacheGroups`");
  edit(app, 'src/app/product/product.ts', (text) =>
    [
      ...importsOf(groups),
      "import { requestCookie } from '../render-inputs';",
      "import { CURRENCY } from '../currency';",
      text
        .replace(
          /protected readonly currency = \(\(\) => \{[\s\S]*?\}\)\(\);/,
          "protected readonly currency = requestCookie('currency', CURRENCY);",
        )
        .replace(
          '  protected readonly price',
          "  constructor() {\n    addCacheGroups(`product-${this.id}`, 'catalog');\n  }\n\n  protected readonly price",
        ),
    ].join('\n'),
  );

  // The guide's recipe page: whole files from its blocks, its route cut from the routes block.
  create(app, 'src/app/recipes.ts', blockAfter(yourApp, '## The data'));
  create(app, 'src/app/pages/recipe.ts', blockAfter(yourApp, '`src/app/pages/recipe.ts`:'));
  const routes = blockAfter(yourApp, "Add the route **before** the `'**'` route");
  const recipeOf = /\/\*\* The recipe of a route[\s\S]*?\)!;\n/.exec(routes)?.[0];
  if (!recipeOf) throw new Error("the guide's routes block no longer defines recipeOf");
  edit(app, 'src/app/app.routes.ts', (text) =>
    [
      ...importsOf(routes),
      text
        .replace("import { Routes } from '@angular/router';\n", recipeOf)
        .replace("  { path: '**',", `  ${routeObject(routes, 'recipes/:slug')},\n  { path: '**',`),
    ].join('\n'),
  );
  // Route parameters as inputs, which the guide's component takes (`slug`).
  edit(app, 'src/app/app.config.ts', (text) =>
    text
      .replace(
        "import { provideRouter } from '@angular/router';",
        "import { provideRouter, withComponentInputBinding } from '@angular/router';",
      )
      .replace('provideRouter(routes)', 'provideRouter(routes, withComponentInputBinding())'),
  );

  // The pages the tools load.
  writeFileSync(
    join(app, 'load-paths.json'),
    `${JSON.stringify(
      {
        prerendered: '/about',
        rendered: { path: '/products/{id}', ids: [1, 1000], cached: true },
        notFound: '/no-such-page',
      },
      null,
      2,
    )}\n`,
  );
}
