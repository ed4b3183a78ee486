import { Component, signal } from '@angular/core';

/**
 * Prerendered at build time (app.routes.server.ts): the origin serves it from memory with an ETag.
 * A small form, so the page has markup and event listeners to hydrate.
 */
@Component({
  selector: 'app-home',
  template: `
    <h1 i18n="@@homeTitle">Welcome</h1>
    <p>This page is prerendered at build time and served from the origin without rendering.</p>
    <form class="form-row" (submit)="submit($event)">
      <label>First name <input name="firstName" (input)="firstName.set(valueOf($event))" /></label>
      <label>Last name <input name="lastName" (input)="lastName.set(valueOf($event))" /></label>
      <button class="button" type="submit">Submit</button>
    </form>
    <!-- A click before hydration is replayed once the app hydrates (test/browser/csp.test.mjs). -->
    <button class="button counter" type="button" (click)="clicks.set(clicks() + 1)">
      Clicked {{ clicks() }} times
    </button>
    @if (greeting(); as text) {
      <p role="status">{{ text }}</p>
    }
  `,
})
export default class Home {
  protected readonly firstName = signal('');
  protected readonly lastName = signal('');
  protected readonly greeting = signal('');
  protected readonly clicks = signal(0);

  protected valueOf(event: Event): string {
    return (event.target as HTMLInputElement).value;
  }

  protected submit(event: Event): void {
    event.preventDefault();
    const name = `${this.firstName()} ${this.lastName()}`.trim();
    this.greeting.set(name ? `Hello, ${name}!` : 'Please tell us your name.');
  }
}
