import { inject } from '@angular/core';
import { ActivatedRouteSnapshot, Route, Routes, UrlSegment } from '@angular/router';
import { map } from 'rxjs';
import { isProductId } from './products';
import { Shop } from './shop';

/**
 * The product of a route the canMatch guard has validated, from the API: one request for the
 * route's title, description and page (Shop.product).
 */
const productOf = (route: ActivatedRouteSnapshot) =>
  inject(Shop).product(route.paramMap.get('id')!);

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
    path: 'products',
    title: 'Products',
    data: { description: 'Every category of the shop, with a few of its products.' },
    loadComponent: () => import('./pages/products'),
  },
  {
    path: 'products/:id',
    // The page's <title> and description are the product's, in the server's HTML.
    title: (route) =>
      productOf(route).pipe(
        map((p) => (p.ok ? p.value.name : p.status === 404 ? 'No such product' : 'Unavailable')),
      ),
    resolve: {
      product: productOf,
      description: (route: ActivatedRouteSnapshot) =>
        productOf(route).pipe(map((p) => (p.ok ? p.value.description : undefined))),
    },
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
