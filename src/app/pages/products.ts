import { Component, inject, RESPONSE_INIT } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { tap } from 'rxjs';
import { MatCardModule } from '@angular/material/card';
import { MatListModule } from '@angular/material/list';
import { RouterLink } from '@angular/router';
import { addCacheGroups } from '../cache-groups';
import { Shop } from '../shop';

/**
 * The shop's categories, each with a few of its products: made of the catalog the API sends
 * during the render (the same one every product page asks for), shared by every visitor for a
 * minute (app.routes.server.ts). Each category is an anchor a product page's breadcrumb links to.
 */
@Component({
  selector: 'app-products',
  imports: [MatCardModule, MatListModule, RouterLink],
  template: `
    <h1>Products</h1>
    @if (catalog(); as catalog) {
      @for (category of catalog.categories; track category.slug) {
        <mat-card appearance="outlined" class="category">
          <mat-card-header>
            <mat-card-title
              ><h2 [id]="category.slug">{{ category.name }}</h2></mat-card-title
            >
          </mat-card-header>
          <mat-card-content>
            <mat-nav-list>
              @for (product of category.featured; track product.id) {
                <a mat-list-item [routerLink]="['/products', product.id]">
                  <span matListItemTitle>{{ product.name }}</span>
                  <span matListItemLine>{{ '★'.repeat(product.rating) }}</span>
                </a>
              }
            </mat-nav-list>
          </mat-card-content>
        </mat-card>
      }
    } @else if (catalog() === null) {
      <p class="unavailable">The catalog could not be loaded just now: try again in a moment.</p>
    }
  `,
  styles: `
    .category {
      margin-bottom: 16px;
    }
  `,
})
export default class Products {
  readonly #response = inject(RESPONSE_INIT, { optional: true });
  /**
   * undefined while the API answers, null when it could not: then the page says so with a 503
   * (on the server; the browser has no response), which no cache keeps.
   */
  protected readonly catalog = toSignal(
    inject(Shop)
      .catalog()
      .pipe(tap((catalog) => catalog === null && this.#response && (this.#response.status = 503))),
    { initialValue: undefined },
  );

  constructor() {
    addCacheGroups('catalog');
  }
}
