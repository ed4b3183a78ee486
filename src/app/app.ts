import { Component } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatToolbarModule } from '@angular/material/toolbar';
import { RouterLink, RouterOutlet } from '@angular/router';
import { NavSection } from './nav-section';

@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink, NavSection, MatToolbarModule, MatButtonModule],
  template: `
    <mat-toolbar class="toolbar">
      <a class="brand" routerLink="/">SSR Origin</a>
      <nav>
        @for (link of links; track link.section) {
          <a mat-button [routerLink]="link.href" [appNavSection]="link.section">{{ link.label }}</a>
        }
      </nav>
    </mat-toolbar>
    <main>
      <router-outlet />
    </main>
  `,
  styles: `
    .toolbar {
      gap: 16px;
    }
    .brand {
      color: inherit;
      text-decoration: none;
      font: var(--mat-sys-title-large);
    }
    nav {
      display: flex;
      gap: 4px;
    }
    /* The current section, marked by NavSection with aria-current="page". */
    nav [aria-current='page'] {
      background: var(--mat-sys-secondary-container);
      color: var(--mat-sys-on-secondary-container);
    }
    main {
      max-width: 960px;
      margin: 0 auto;
      padding: 24px 16px;
    }
  `,
})
export class App {
  /** Each link's section is the first segment of its routes' paths (see nav-section.ts). */
  protected readonly links = [
    { section: '', href: '/', label: 'Home' },
    { section: 'products', href: '/products', label: 'Products' },
    { section: 'dashboard', href: '/dashboard', label: 'Dashboard' },
    { section: 'account', href: '/account', label: 'Account' },
  ];
}
