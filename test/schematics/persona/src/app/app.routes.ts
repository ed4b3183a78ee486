import { Routes } from '@angular/router';

export const routes: Routes = [
  { path: '', loadComponent: () => import('./home').then((m) => m.Home) },
  { path: 'about', title: 'About', loadComponent: () => import('./about').then((m) => m.About) },
  {
    path: 'products/:id',
    loadComponent: () => import('./product/product').then((m) => m.Product),
  },
  { path: '**', loadComponent: () => import('./not-found').then((m) => m.NotFound) },
];
