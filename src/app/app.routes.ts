import { ActivatedRouteSnapshot, Route, Routes, UrlSegment } from '@angular/router';
import { isProductId, makeProduct } from './products';

/** The product of a route the canMatch guard has validated. */
const productOf = (route: ActivatedRouteSnapshot) => makeProduct(Number(route.paramMap.get('id')));

export const routes: Routes = [
  {
    path: '',
    title: 'Home',
    data: {
      description:
        'An Angular app served by a fast, tested Koa origin: prerendered, server-rendered and client-only pages.',
    },
    loadComponent: () => import('./pages/home'),
  },
  {
    path: 'products/:id',
    // The page's <title> and description are the product's, in the server's HTML.
    title: (route) => productOf(route).name,
    resolve: { description: (route: ActivatedRouteSnapshot) => productOf(route).description },
    // An id that cannot name a product falls through to the not-found page (and its 404).
    canMatch: [(_route: Route, segments: UrlSegment[]) => isProductId(segments[1]?.path)],
    loadComponent: () => import('./pages/product'),
  },
  {
    path: 'account',
    title: 'Your account',
    data: { description: 'Your session, rendered on the server for you alone and never cached.' },
    loadComponent: () => import('./pages/account'),
  },
  {
    path: 'dashboard',
    title: 'Dashboard',
    data: {
      description: 'Your visits, counted in this browser: a page rendered only on the client.',
    },
    loadComponent: () => import('./pages/dashboard'),
  },
  {
    path: 'async-work',
    title: 'Async work',
    data: { description: 'What a server render waits for: timers, RxJS and an HTTP call.' },
    loadComponent: () => import('./pages/async-work'),
  },
  {
    path: '**',
    title: 'Page not found',
    data: { description: 'There is nothing at this address.' },
    loadComponent: () => import('./pages/not-found'),
  },
];
