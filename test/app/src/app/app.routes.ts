import { Route, Routes, UrlSegment } from '@angular/router';
import { isProductId } from './products';

// Every page is lazy: the build then has chunk-*.js files, which the origin's file tests serve.
export const routes: Routes = [
  { path: '', title: 'Home', loadComponent: () => import('./pages/home') },
  {
    path: 'products/:id',
    title: 'Product',
    // An id that cannot name a product falls through to the not-found page (and its 404).
    canMatch: [(_route: Route, segments: UrlSegment[]) => isProductId(segments[1]?.path)],
    loadComponent: () => import('./pages/product'),
  },
  // Router redirects: the engines answer them differently (docs/choosing-an-engine.md).
  { path: 'moved', pathMatch: 'full', redirectTo: '/products/4' },
  { path: 'moved/:id', redirectTo: 'products/:id' },
  { path: 'dashboard', title: 'Dashboard', loadComponent: () => import('./pages/dashboard') },
  { path: 'async-work', title: 'Async work', loadComponent: () => import('./pages/async-work') },
  { path: 'throws', title: 'Throws', loadComponent: () => import('./pages/throws') },
  { path: 'throws-shared', title: 'Throws', loadComponent: () => import('./pages/throws') },
  { path: 'injected', title: 'Injected', loadComponent: () => import('./pages/injected') },
  { path: 'seen/:id', title: 'Seen', loadComponent: () => import('./pages/seen') },
  { path: 'private-seen', title: 'Seen', loadComponent: () => import('./pages/seen') },
  { path: 'naive/:id', title: 'Naive', loadComponent: () => import('./pages/naive') },
  { path: 'naive-private/:id', title: 'Naive', loadComponent: () => import('./pages/naive') },
  { path: 'naive-default/:id', title: 'Naive', loadComponent: () => import('./pages/naive') },
  { path: 'naive-undeclared/:id', title: 'Naive', loadComponent: () => import('./pages/naive') },
  { path: 'data/:id', title: 'Data', loadComponent: () => import('./pages/data') },
  { path: 'data-private/:id', title: 'Data', loadComponent: () => import('./pages/data') },
  { path: 'parts/:id', title: 'Parts', loadComponent: () => import('./pages/parts') },
  { path: 'parts-data/:id', title: 'Parts', loadComponent: () => import('./pages/parts-data') },
  { path: 'parts-nested', title: 'Parts', loadComponent: () => import('./pages/parts-nested') },
  { path: '**', title: 'Not found', loadComponent: () => import('./pages/not-found') },
];
