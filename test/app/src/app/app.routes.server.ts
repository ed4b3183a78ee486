import { RenderMode, ServerRoute } from '@angular/ssr';
import { CURRENCY } from './currency';
import { renderInputs } from './render-inputs';

/**
 * How each route is rendered: one route per render mode the origin handles differently. The
 * origin (server/) reads this same list.
 */
export const serverRoutes: ServerRoute[] = [
  // Prerendered at build time: served from memory, never rendered by the origin.
  { path: '', renderMode: RenderMode.Prerender },
  {
    path: 'products/:id',
    renderMode: RenderMode.Server,
    // A shared-cache policy: the origin's render cache keys on it (test/server/render-cache*.test.mjs).
    headers: {
      'Cache-Control': 's-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
    },
  },
  // A shared page that depends on a cookie and a header, each a closed set: one page per
  // combination, and a render that sees those and nothing else of the request.
  {
    path: 'seen/:id',
    renderMode: RenderMode.Server,
    headers: {
      'Cache-Control': 's-maxage=60, stale-while-revalidate=600',
      ...renderInputs({
        cookies: { currency: CURRENCY },
        headers: { 'X-AB-Bucket': { values: ['a', 'b'], default: 'a' } },
      }),
    },
  },
  // The same page, private: its render sees the client's request.
  {
    path: 'private-seen',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 'private, no-store' },
  },
  // A page that reads the request naively (the raw cookie header, undeclared headers), on a shared
  // route that declares one cookie, a private route and a route without a policy: what each answer
  // lets caches keep (test/server/shareable.test.mjs).
  {
    path: 'naive/:id',
    renderMode: RenderMode.Server,
    headers: {
      'Cache-Control': 's-maxage=60, stale-while-revalidate=600',
      // It reads the request naively on purpose: no warning per read (test/server/undeclared-reads.test.mjs has those).
      ...renderInputs({ cookies: { currency: CURRENCY }, undeclaredReads: 'ignore' }),
    },
  },
  {
    path: 'naive-private/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 'private, no-store' },
  },
  { path: 'naive-default/:id', renderMode: RenderMode.Server },
  // Shared without a word of its inputs: every read of the request is one its route does not
  // declare, said once per input (test/server/undeclared-reads.test.mjs).
  {
    path: 'naive-undeclared/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60' },
  },
  // Pages made of data (an API on loopback, TEST_DATA_API): shared for a minute, unless their data
  // says otherwise (test/server/data-pages.test.mjs).
  {
    path: 'data/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60, stale-while-revalidate=600' },
  },
  {
    path: 'data-private/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60' },
  },
  // A shared page with personal parts (app.parts.ts): the page is cached once, each visitor's parts
  // are rendered apart (renderPart in main.server.ts).
  {
    path: 'parts/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60, stale-while-revalidate=600' },
  },
  // The same with an API's string printed in the page (pages/parts-data.ts), for ESI markup in data.
  {
    path: 'parts-data/:id',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60, stale-while-revalidate=600' },
  },
  // Parts nested in parts: its render throws.
  { path: 'parts-nested', renderMode: RenderMode.Server },
  // Router redirects (app.routes.ts): CommonEngine renders the target, Angular's engine answers 302.
  { path: 'moved', renderMode: RenderMode.Server },
  { path: 'moved/:id', renderMode: RenderMode.Server },
  // Client only: the origin answers with the client-side shell (index.csr.html).
  { path: 'dashboard', renderMode: RenderMode.Client },
  // Rendered per request, no cache policy: never stored by the render cache.
  { path: 'async-work', renderMode: RenderMode.Server },
  { path: 'throws', renderMode: RenderMode.Server },
  // The same failing page under a shared-cache policy: a failed render is never stored.
  {
    path: 'throws-shared',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 's-maxage=60' },
  },
  // Renders an attacker's string through a bypassed sanitizer: what CSP=strict must block.
  { path: 'injected', renderMode: RenderMode.Server },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
