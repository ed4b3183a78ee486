import { RenderMode, ServerRoute } from '@angular/ssr';

/**
 * How each route is rendered. The origin (server/) reads this same list, so a route's
 * render mode and status are declared once, here.
 */
export const serverRoutes: ServerRoute[] = [
  { path: '', renderMode: RenderMode.Prerender },
  {
    path: 'products/:id',
    renderMode: RenderMode.Server,
    // The same for every visitor for a minute: the origin's render cache and any CDN in front may
    // share it (s-maxage: shared caches only; browsers revalidate), and serve it up to 10 minutes
    // stale while one background render refreshes it. See docs/render-cache-and-cdn.md.
    headers: {
      'Cache-Control': 'public, s-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
    },
  },
  { path: 'dashboard', renderMode: RenderMode.Client },
  { path: 'async-work', renderMode: RenderMode.Server },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
