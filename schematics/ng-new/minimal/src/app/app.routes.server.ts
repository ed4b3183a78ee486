import { RenderMode, ServerRoute } from '@angular/ssr';

/**
 * How each route is rendered. The origin (server/) reads this same list, so a route's render mode,
 * status and headers are declared once, here. A route that is the same for every visitor for a
 * while can declare a shared-cache policy, e.g. `headers: { 'Cache-Control': 'public, s-maxage=60' }`,
 * and the origin's render cache keeps it (docs/render-cache-and-cdn.md).
 */
export const serverRoutes: ServerRoute[] = [
  { path: '', renderMode: RenderMode.Prerender },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
