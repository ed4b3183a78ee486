import { Component } from '@angular/core';
import { RouterLink, RouterLinkActive, RouterOutlet } from '@angular/router';

/** The shell every page renders in: a header with links (router links hydrate) and the outlet. */
@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink, RouterLinkActive],
  template: `
    <header class="site-header">
      <a class="brand" routerLink="/">Fixture</a>
      <nav>
        <a
          routerLink="/"
          routerLinkActive="current"
          ariaCurrentWhenActive="page"
          [routerLinkActiveOptions]="{ exact: true }"
          >Home</a
        >
        <a routerLink="/products/1" routerLinkActive="current" ariaCurrentWhenActive="page"
          >Products</a
        >
        <a routerLink="/dashboard" routerLinkActive="current" ariaCurrentWhenActive="page"
          >Dashboard</a
        >
      </nav>
    </header>
    <main>
      <router-outlet />
    </main>
  `,
  // A component style too, so pages carry Angular's own <style> next to the inlined critical CSS.
  styles: `
    nav {
      display: flex;
      gap: 12px;
    }
  `,
})
export class App {}
