import { Component, RESPONSE_INIT, inject } from '@angular/core';
import { RouterLink } from '@angular/router';

/**
 * Any other path, and /products/<not an id>: a page rendered with status 404, which the origin
 * must pass on (the route's `status`, and RESPONSE_INIT set while rendering).
 */
@Component({
  selector: 'app-not-found',
  imports: [RouterLink],
  template: `
    <h1 i18n="@@notFoundTitle">Page not found</h1>
    <p>There is nothing at this address. <a routerLink="/">Go home</a></p>
  `,
})
export default class NotFound {
  constructor() {
    // On the server, tell the origin to answer 404 (RESPONSE_INIT is null in the browser).
    const response = inject(RESPONSE_INIT, { optional: true });
    if (response) {
      response.status = 404;
    }
  }
}
