import { Component, computed, DOCUMENT, inject, input, RESPONSE_INIT, signal } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { MatButtonModule } from '@angular/material/button';
import { MatButtonToggleModule } from '@angular/material/button-toggle';
import { MatCardModule } from '@angular/material/card';
import { MatListModule } from '@angular/material/list';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { addCacheGroups } from '../cache-groups';
import { chooseCurrency, CURRENCY, type Currency, formatPrice } from '../currency';
import type { Product as ProductData } from '../products';
import { PersonalPart } from '../personal-part';
import { requestCookie } from '../render-inputs';
import { type Fetched, Shop } from '../shop';

/**
 * Rendered on the server and shared for a minute (app.routes.server.ts): the content is the
 * product the API sends for the :id route parameter (fetched by the route, app.routes.ts) and its
 * category from the catalog every page shares, priced in the visitor's `currency` cookie, which
 * the route declares, so every visitor gets a cached page in their currency. The greeting of a
 * signed-in visitor and their cart count are personal: a personal part (app.parts.ts `greeting`),
 * whose placeholder, what a signed-out visitor sees, is all the shared page holds. The origin
 * renders the part for each signed-in visitor and puts it in their copy of the cached page, before
 * any script runs; in the browser the part is the app's own live component (its button works).
 */
@Component({
  selector: 'app-product',
  imports: [
    MatCardModule,
    MatListModule,
    MatButtonModule,
    MatButtonToggleModule,
    RouterLink,
    PersonalPart,
  ],
  template: `
    @let fetched = product();
    @if (fetched.ok) {
      @let p = fetched.value;
      <!-- Spaced by its paragraph's margin: the page's one style is its personal part's place. -->
      <nav class="breadcrumb" aria-label="Breadcrumb">
        <p>
          <a routerLink="/products">Shop</a>
          @if (category(); as c) {
            › <a routerLink="/products" [fragment]="c.slug">{{ c.name }}</a>
          }
        </p>
      </nav>
      <mat-card appearance="outlined">
        <mat-card-header>
          <mat-card-title
            ><h1>{{ p.name }}</h1></mat-card-title
          >
          <mat-card-subtitle
            ><span class="price">{{ price() }}</span> ·
            {{ '★'.repeat(p.rating) }}</mat-card-subtitle
          >
        </mat-card-header>
        <mat-card-content>
          <personal-part name="greeting" [inputs]="{ product: p.id }">
            <!-- The placeholder: what a signed-out visitor sees, and every page in the cache. -->
            <p class="greeting"><a href="/account">Sign in</a> to keep a cart.</p>
            <p class="cart"></p>
          </personal-part>
          <mat-button-toggle-group
            class="currency"
            name="currency"
            aria-label="Currency"
            hideSingleSelectionIndicator
            [value]="currency()"
            (change)="choose($event.value)"
          >
            @for (code of currencies; track code) {
              <!-- Ids of its own: Material's would count up with every render, and the page is shared. -->
              <mat-button-toggle [value]="code" [id]="'currency-' + code">{{
                code
              }}</mat-button-toggle>
            }
          </mat-button-toggle-group>
          <p class="description">{{ p.description }}</p>
          <mat-list>
            @for (spec of p.specs; track spec.label) {
              <mat-list-item>
                <span matListItemTitle>{{ spec.label }}</span>
                <span matListItemLine>{{ spec.value }}</span>
              </mat-list-item>
            }
          </mat-list>
        </mat-card-content>
        <mat-card-actions>
          @if (p.id > 1) {
            <a mat-button [routerLink]="['/products', p.id - 1]">Previous</a>
          }
          <a mat-button [routerLink]="['/products', p.id + 1]">Next</a>
        </mat-card-actions>
      </mat-card>
    } @else {
      <h1>{{ fetched.status === 404 ? 'No such product' : 'This product is unavailable' }}</h1>
      <p class="unavailable">
        {{
          fetched.status === 404
            ? 'The shop has no product at this address.'
            : 'It could not be loaded just now: try again in a moment.'
        }}
      </p>
      <a mat-button routerLink="/products">All products</a>
    }
  `,
  // The part's place keeps one size, whichever of the placeholder or the visitor's part it shows:
  // the page does not move when the part is put in.
  styles: `
    personal-part {
      display: block;
      min-height: 6.5rem;
    }
  `,
})
export default class Product {
  /** Resolved by the route from the API, bound by withComponentInputBinding(). */
  readonly product = input.required<Fetched<ProductData>>();
  /** The product's category, from the catalog; none while it loads or when it failed. */
  protected readonly category = computed(() => {
    const product = this.product();
    return product.ok
      ? this.#catalog()?.categories.find((c) => c.slug === product.value.category)
      : undefined;
  });
  protected readonly currencies = CURRENCY.values;
  /** The server's, from the declared cookie; the browser's, from the same cookie: they agree. */
  protected readonly currency = signal(requestCookie('currency', CURRENCY));
  protected readonly price = computed(() => {
    const product = this.product();
    return product.ok ? formatPrice(product.value.priceCents, this.currency()) : '';
  });
  readonly #document = inject(DOCUMENT);
  readonly #catalog = toSignal(inject(Shop).catalog());

  constructor() {
    // What this page is made from, for revalidation by group (docs/revalidation.md): this product
    // and the catalog. Read from the route here, where inputs are not bound yet (the route's
    // canMatch allows one spelling per id, so one group per product).
    const route = inject(ActivatedRoute).snapshot;
    const id = route.paramMap.get('id');
    if (id !== null) {
      addCacheGroups(`product-${id}`, 'catalog');
    }
    // A page without its product says why with its status, 404 or 503 (the API failed), which no
    // cache keeps. On the server only: the browser has no response.
    const fetched = route.data['product'] as Fetched<ProductData> | undefined;
    const response = inject(RESPONSE_INIT, { optional: true });
    if (response && fetched?.ok === false) {
      response.status = fetched.status;
    }
  }

  protected choose(currency: Currency): void {
    chooseCurrency(this.#document, currency);
    this.currency.set(currency);
  }
}
