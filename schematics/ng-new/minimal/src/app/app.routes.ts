import { Routes } from '@angular/router';

export const routes: Routes = [
  // Each page's <title> and meta description, set while rendering (page-title.ts).
  {
    path: '',
    title: 'Home',
    data: { description: 'Welcome to SSR Origin.' },
    loadComponent: () => import('./pages/home'),
  },
  {
    path: '**',
    title: 'Page not found',
    data: { description: 'There is nothing at this address.' },
    loadComponent: () => import('./pages/not-found'),
  },
];
