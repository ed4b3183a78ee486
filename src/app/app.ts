import { Component, inject } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { MatButtonModule } from '@angular/material/button';
import { MatToolbarModule } from '@angular/material/toolbar';
import { NavigationEnd, Router, RouterLink, RouterOutlet } from '@angular/router';
import { filter, map } from 'rxjs';

/** The first path segment: the nav's section (`/products/42` is in Products, whatever the id). */
const sectionOf = (url: string) => new URL(url, 'http://app').pathname.split('/')[1] ?? '';

@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink, MatToolbarModule, MatButtonModule],
  template: `
    <mat-toolbar class="toolbar">
      <a class="brand" routerLink="/">SSR Origin</a>
      <nav>
        @for (link of links; track link.section) {
          <a
            mat-button
            [routerLink]="link.href"
            [class.active]="section() === link.section"
            [attr.aria-current]="section() === link.section ? 'page' : null"
            >{{ link.label }}</a
          >
        }
      </nav>
    </mat-toolbar>
    <main>
      <router-outlet />
    </main>
  `,
  styles: `
    .toolbar { gap: 16px; }
    .brand { color: inherit; text-decoration: none; font: var(--mat-sys-title-large); }
    nav { display: flex; gap: 4px; }
    .active { background: var(--mat-sys-secondary-container); }
    main { max-width: 960px; margin: 0 auto; padding: 24px 16px; }
  `,
})
export class App {
  private readonly router = inject(Router);
  protected readonly links = [
    { section: '', href: '/', label: 'Home' },
    { section: 'products', href: '/products/1', label: 'Products' },
    { section: 'dashboard', href: '/dashboard', label: 'Dashboard' },
  ];
  /** Marked in the server's HTML too: the router has navigated before the page is serialized. */
  protected readonly section = toSignal(
    this.router.events.pipe(
      filter((event) => event instanceof NavigationEnd),
      map((event) => sectionOf(event.urlAfterRedirects)),
    ),
    { initialValue: sectionOf(this.router.url) },
  );
}
