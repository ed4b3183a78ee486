import { HttpClient, HttpErrorResponse } from '@angular/common/http';
import { inject, Injectable } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { Event, NavigationCancel, NavigationEnd, NavigationError, Router } from '@angular/router';
import { catchError, filter, map, type Observable, of, shareReplay } from 'rxjs';
import { API_BASE_URL } from './api-url';
import type { Catalog, Product } from './products';

/** What the API answered: the value, or the status a page made without it answers with. */
export type Fetched<T> = { ok: true; value: T } | { ok: false; status: 404 | 503 };

/**
 * The demo's data, from its API (src/api/) through HttpClient: on the server during the render
 * (through the origin's data cache), in the browser after hydration only for client navigations,
 * since Angular's transfer cache hands the browser what the server fetched (api-url.ts).
 */
@Injectable({ providedIn: 'root' })
export class Shop {
  readonly #http = inject(HttpClient);
  readonly #base = inject(API_BASE_URL);
  /** The product asked for by this navigation: its title, description and page share one request. */
  #last: { id: string; product: Observable<Fetched<Product>> } | undefined;

  constructor() {
    // The next navigation asks again: a product seen a minute ago may have changed since.
    inject(Router)
      .events.pipe(filter(navigationOver), takeUntilDestroyed())
      .subscribe(() => (this.#last = undefined));
  }

  /** The categories every page shows; null when the API could not answer. */
  catalog(): Observable<Catalog | null> {
    return this.#http.get<Catalog>(`${this.#base}/catalog`).pipe(catchError(() => of(null)));
  }

  /** A product by its id (the route has checked its form), asked once however many ask. */
  product(id: string): Observable<Fetched<Product>> {
    if (this.#last?.id !== id) {
      const product = this.#http.get<Product>(`${this.#base}/products/${id}`).pipe(
        map((value): Fetched<Product> => ({ ok: true, value })),
        catchError((error: unknown) =>
          of<Fetched<Product>>({
            ok: false,
            status: error instanceof HttpErrorResponse && error.status === 404 ? 404 : 503,
          }),
        ),
        shareReplay({ bufferSize: 1, refCount: false }),
      );
      this.#last = { id, product };
    }
    return this.#last.product;
  }
}

function navigationOver(event: Event): boolean {
  return (
    event instanceof NavigationEnd ||
    event instanceof NavigationCancel ||
    event instanceof NavigationError
  );
}
