import { Component, DOCUMENT, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatCardModule } from '@angular/material/card';
import { cookieHeader, cookieValue } from '../render-inputs';

/**
 * The other side of a shared page: private to one visitor (`Cache-Control: private, no-store` in
 * app.routes.server.ts), so its render sees the visitor's request, cookies and all, through
 * Angular's REQUEST, and no cache ever keeps it. The demo's session is a plain cookie the page
 * sets itself; a real one would be an HttpOnly cookie your sign-in sets.
 */
@Component({
  selector: 'app-account',
  imports: [MatCardModule, MatButtonModule],
  template: `
    <mat-card appearance="outlined">
      <mat-card-header>
        <mat-card-title><h1>Your account</h1></mat-card-title>
        <mat-card-subtitle>Rendered on the server for you alone</mat-card-subtitle>
      </mat-card-header>
      <mat-card-content>
        @if (session(); as sid) {
          <p class="session">
            Signed in with session <code>{{ sid }}</code>.
          </p>
        } @else {
          <p class="session">Not signed in.</p>
        }
      </mat-card-content>
      <mat-card-actions>
        @if (session()) {
          <button mat-button type="button" (click)="signOut()">Sign out</button>
        } @else {
          <button mat-button type="button" (click)="signIn()">Sign in</button>
        }
      </mat-card-actions>
    </mat-card>
  `,
})
export default class Account {
  readonly #document = inject(DOCUMENT);
  /** On the server from the request's cookies; in the browser from the same cookie. */
  protected readonly session = signal(cookieValue(cookieHeader(), 'sid'));

  protected signIn(): void {
    const sid = crypto.randomUUID().slice(0, 8);
    this.#document.cookie = `sid=${sid}; path=/; samesite=lax`;
    this.session.set(sid);
  }

  protected signOut(): void {
    this.#document.cookie = 'sid=; path=/; max-age=0; samesite=lax';
    this.session.set(undefined);
  }
}
