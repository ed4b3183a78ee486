import { Component } from '@angular/core';
import { MatToolbarModule } from '@angular/material/toolbar';
import { RouterLink, RouterOutlet } from '@angular/router';

@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink, MatToolbarModule],
  template: `
    <mat-toolbar class="toolbar">
      <a class="brand" routerLink="/">SSR Origin</a>
    </mat-toolbar>
    <main>
      <router-outlet />
    </main>
  `,
  styles: `
    .brand {
      color: inherit;
      text-decoration: none;
      font: var(--mat-sys-title-large);
    }
    main {
      max-width: 960px;
      margin: 0 auto;
      padding: 24px 16px;
    }
  `,
})
export class App {}
