import { Component, inject, REQUEST } from '@angular/core';
import { ActivatedRoute } from '@angular/router';

/**
 * A page written the way many existing apps read the request: the raw `cookie` header parsed by
 * hand for a session, an undeclared header, every header listed — nothing of renderInputs(). The
 * shareability tests (test/server/shareable.test.mjs) render it on a shared route, a private one
 * and one without a policy, and look for the visitor's values in what each answer lets caches
 * keep. It names the route the router matched and the matrix parameters it read.
 */
@Component({
  selector: 'app-naive',
  template: `
    <h1>Naive</h1>
    <p class="route">{{ route }}</p>
    <p class="matrix">{{ matrix }}</p>
    <p class="greeting">{{ sid ? 'Welcome back, ' + sid + '!' : 'Hello, stranger' }}</p>
    <p class="user">{{ user }}</p>
    <pre class="headers">{{ headers }}</pre>
  `,
})
export default class Naive {
  readonly #request = inject(REQUEST, { optional: true });
  readonly #route = inject(ActivatedRoute).snapshot;
  protected readonly route = this.#route.routeConfig?.path ?? '';
  protected readonly matrix = JSON.stringify(
    this.#route.paramMap.keys
      .filter((key) => key !== 'id')
      .map((key) => [key, this.#route.paramMap.get(key)]),
  );
  protected readonly sid = /(?:^|;\s*)sid=([^;]*)/.exec(
    this.#request?.headers.get('cookie') ?? '',
  )?.[1];
  protected readonly user = this.#request?.headers.get('x-user') ?? 'nobody';
  protected readonly headers = JSON.stringify([...(this.#request?.headers ?? [])]);
}
