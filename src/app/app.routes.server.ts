import { RenderMode, ServerRoute } from '@angular/ssr';
import { CURRENCY } from './currency';
import { renderInputs } from './render-inputs';

/**
 * How each route is rendered. The origin (server/) reads this same list, so a route's
 * render mode and status are declared once, here.
 */
export const serverRoutes: ServerRoute[] = [
  { path: '', renderMode: RenderMode.Prerender },
  {
    path: 'products',
    renderMode: RenderMode.Server,
    // Made of the catalog alone, the same for every visitor: shared, as the product pages are.
    headers: {
      'Cache-Control': 's-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
      'No-Vary-Search': 'params',
    },
  },
  {
    path: 'products/:id',
    renderMode: RenderMode.Server,
    // The same for every visitor in one currency for a minute: the origin's render cache and any
    // CDN in front may share it (s-maxage: shared caches only; browsers revalidate), and serve it
    // up to 10 minutes stale while one background render refreshes it. Its page depends on the
    // `currency` cookie and nothing else of the request. See docs/render-cache-and-cdn.md.
    headers: {
      'Cache-Control': 's-maxage=60, stale-while-revalidate=600, stale-if-error=86400',
      ...renderInputs({ cookies: { currency: CURRENCY } }),
    },
  },
  // Private to one visitor: rendered on every request, with the visitor's request, never stored.
  {
    path: 'account',
    renderMode: RenderMode.Server,
    headers: { 'Cache-Control': 'private, no-store' },
  },
  { path: 'dashboard', renderMode: RenderMode.Client },
  { path: 'async-work', renderMode: RenderMode.Server },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
