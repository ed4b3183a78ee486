import { Component, signal } from '@angular/core';

/**
 * Client only (RenderMode.Client): it reads browser-only state, so it would fail on the server.
 * The origin must answer with the client-side shell, never this text.
 */
@Component({
  selector: 'app-dashboard',
  template: `
    <h1>Dashboard</h1>
    <p class="rendered-by">Rendered in the browser.</p>
    <p>Viewport: {{ viewport() }}; stored visits: {{ visits() }}</p>
  `,
})
export default class Dashboard {
  protected readonly viewport = signal(`${window.innerWidth} × ${window.innerHeight}`);
  protected readonly visits = signal(Number(localStorage.getItem('fixture.visits') ?? '0'));
}
