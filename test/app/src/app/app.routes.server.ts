import { RenderMode, ServerRoute } from '@angular/ssr';

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
      'Cache-Control': 'public, s-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
    },
  },
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
    headers: { 'Cache-Control': 'public, s-maxage=60' },
  },
  // Renders an attacker's string through a bypassed sanitizer: what CSP=strict must block.
  { path: 'injected', renderMode: RenderMode.Server },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
