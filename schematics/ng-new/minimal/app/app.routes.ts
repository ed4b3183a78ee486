import { Routes } from '@angular/router';

export const routes: Routes = [
  { path: '', title: 'SSR Origin', loadComponent: () => import('./pages/home') },
  { path: '**', title: 'Page not found', loadComponent: () => import('./pages/not-found') },
];
