import { Component } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatToolbarModule } from '@angular/material/toolbar';
import { RouterLink, RouterLinkActive, RouterOutlet } from '@angular/router';

@Component({
  selector: 'app-root',
  imports: [RouterOutlet, RouterLink, RouterLinkActive, MatToolbarModule, MatButtonModule],
  template: `
    <mat-toolbar class="toolbar">
      <a class="brand" routerLink="/">Fixture</a>
      <nav>
        <a mat-button routerLink="/" routerLinkActive="active" [routerLinkActiveOptions]="{ exact: true }">Home</a>
        <a mat-button routerLink="/products/1" routerLinkActive="active">Products</a>
        <a mat-button routerLink="/dashboard" routerLinkActive="active">Dashboard</a>
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
export class App {}
