import { DecimalPipe } from '@angular/common';
import { Component, inject, LOCALE_ID, REQUEST } from '@angular/core';
import { ActivatedRoute } from '@angular/router';
import { CURRENCY } from '../currency';
import { requestCookie } from '../render-inputs';

/**
 * Everything of the request its render sees, written into the page: the render-input tests look
 * for values a route did not declare (test/server/render-inputs.test.mjs). Both the shared route
 * (`seen/:id`, which declares a currency cookie and an A/B header) and the private one
 * (`private-seen`) render it.
 */
@Component({
  selector: 'app-seen',
  imports: [DecimalPipe],
  template: `
    <p class="locale">{{ locale }} {{ 1234.5 | number }}</p>
    <h1>Seen</h1>
    <p class="route">{{ route }}</p>
    <p class="currency">{{ currency }}</p>
    <p class="theme">{{ theme }}</p>
    <p class="user">{{ user }}</p>
    <pre class="request">{{ seen }}</pre>
  `,
})
export default class Seen {
  /** The render's locale, and a number formatted with its data: each locale's own, whatever rendered before. */
  protected readonly locale = inject(LOCALE_ID);
  /** The route the router matched: the shared `seen/:id` or the private `private-seen`. */
  protected readonly route = inject(ActivatedRoute).snapshot.routeConfig?.path ?? '';
  protected readonly currency = requestCookie('currency', CURRENCY);
  // Neither is declared by `seen/:id`: its shared page always gets the default and nobody, and
  // under `npm start` each read is a warning naming the route and the input.
  protected readonly theme = requestCookie('theme', {
    values: ['light', 'dark'],
    default: 'light',
  });
  protected readonly user = inject(REQUEST, { optional: true })?.headers.get('x-user') ?? 'nobody';
  protected readonly seen = describe(inject(REQUEST, { optional: true }));
}

function describe(request: Request | null): string {
  if (request === null) {
    return 'no request';
  }
  return JSON.stringify({
    method: request.method,
    url: request.url,
    headers: [...request.headers],
  });
}
