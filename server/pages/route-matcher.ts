import { RenderMode, type ServerRoute } from '@angular/ssr';
import { type FailureLog, report } from '../errors.ts';
import { routeCacheRules, type RouteCacheRules } from '../render-cache/policy.ts';
import { routeSegments } from '../request/page-target.ts';
import { DATA_CACHE_HEADER } from '../data-cache/http-rules.ts';
import type { PageInputs } from '../request/render-request.ts';

/** What the app's server routes (src/app/app.routes.server.ts) say about one URL path. */
export interface RouteInfo {
  /** The server route's path (`products/:id`, `**`): how logs and metrics name it. */
  path: string;
  renderMode: RenderMode;
  /** Status the route declares; the page may still change it through RESPONSE_INIT. */
  status: number | undefined;
  headers: Record<string, string> | undefined;
  /** Set when the route's headers let a shared cache store its pages (render-cache/policy.ts). */
  cacheRules: RouteCacheRules | undefined;
  /** The Vary its pages carry: the request inputs it declares (render-inputs.ts), if any. */
  vary: string | undefined;
  /** What its renders see of the request: shared pages their declared inputs alone (render-request.ts). */
  page: PageInputs;
  /** Its renders' fetches go past the data cache (its headers say `Data-Cache: off`). */
  bypassDataCache: boolean;
}

const FALLBACK: RouteInfo = {
  path: '**',
  renderMode: RenderMode.Server,
  status: undefined,
  headers: undefined,
  cacheRules: undefined,
  vary: undefined,
  page: { shared: false, inputs: undefined },
  bypassDataCache: false,
};

/**
 * Matches a path against the server routes the way Angular does: the segments its router reads
 * (request/page-target.ts: matrix parameters and auxiliary outlets aside, each decoded), where
 * `:name` and `*` match one segment and `**` matches the rest. Routes are compiled once; the
 * first route that matches wins, as in Angular's router. A No-Vary-Search it cannot read is
 * logged here, once per route at startup: the route still works, but its query strings are never
 * cached, and nothing else would say why.
 */
export function createRouteLookup(
  routes: readonly ServerRoute[],
  log: FailureLog,
): (pathname: string) => RouteInfo {
  const compiled = routes.map((route) => {
    const cacheRules =
      route.renderMode === RenderMode.Server && 'headers' in route
        ? routeCacheRules(
            route.headers,
            (noVarySearch) =>
              report(
                log,
                'ORIGIN_ROUTE_UNREADABLE',
                { route: route.path, noVarySearch },
                route.path,
              ),
            route.path,
          )
        : undefined;
    const info: RouteInfo = {
      path: route.path,
      renderMode: route.renderMode,
      status: 'status' in route ? route.status : undefined,
      headers: 'headers' in route ? route.headers : undefined,
      cacheRules,
      vary: cacheRules?.inputs?.vary,
      page: { shared: cacheRules !== undefined, inputs: cacheRules?.inputs },
      bypassDataCache: Object.entries(('headers' in route ? route.headers : undefined) ?? {}).some(
        ([name, value]) => name.toLowerCase() === DATA_CACHE_HEADER && value.trim() === 'off',
      ),
    };
    return { segments: route.path.split('/').filter(Boolean), info };
  });
  return (pathname) => {
    const segments = routeSegments(pathname);
    return compiled.find((route) => matches(route.segments, segments))?.info ?? FALLBACK;
  };
}

function matches(pattern: readonly string[], segments: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '**') {
      return true;
    }
    if (i >= segments.length) {
      return false;
    }
    if (pattern[i] !== '*' && !pattern[i].startsWith(':') && pattern[i] !== segments[i]) {
      return false;
    }
  }
  return pattern.length === segments.length;
}
