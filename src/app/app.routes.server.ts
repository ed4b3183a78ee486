import { RenderMode, ServerRoute } from '@angular/ssr';

/**
 * How each route is rendered. The origin (server/) reads this same list, so a route's
 * render mode and status are declared once, here.
 */
export const serverRoutes: ServerRoute[] = [
  { path: '', renderMode: RenderMode.Prerender },
  { path: 'products/:id', renderMode: RenderMode.Server },
  { path: 'dashboard', renderMode: RenderMode.Client },
  { path: '**', renderMode: RenderMode.Server, status: 404 },
];
