import {
  afterNextRender,
  Component,
  computed,
  DOCUMENT,
  inject,
  input,
  signal,
} from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatButtonToggleModule } from '@angular/material/button-toggle';
import { MatCardModule } from '@angular/material/card';
import { MatListModule } from '@angular/material/list';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { addCacheGroups } from '../cache-groups';
import { chooseCurrency, CURRENCY, type Currency, formatPrice } from '../currency';
import { makeProduct } from '../products';
import { cookieValue, requestCookie } from '../render-inputs';

/**
 * Rendered on the server and shared for a minute (app.routes.server.ts): the content depends on
 * the :id route parameter and on the visitor's `currency` cookie, which the route declares, so
 * every visitor gets a cached page in their currency. The greeting of a signed-in visitor is
 * personal: it is added in the browser after hydration, and the shared page stays one page.
 */
@Component({
  selector: 'app-product',
  imports: [MatCardModule, MatListModule, MatButtonModule, MatButtonToggleModule, RouterLink],
  template: `
    @let p = product();
    <mat-card appearance="outlined">
      <mat-card-header>
        <mat-card-title
          ><h1>{{ p.name }}</h1></mat-card-title
        >
        <mat-card-subtitle
          ><span class="price">{{ price() }}</span> · {{ '★'.repeat(p.rating) }}</mat-card-subtitle
        >
      </mat-card-header>
      <mat-card-content>
        @if (greeting(); as hello) {
          <p class="greeting">{{ hello }}</p>
        }
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
  `,
})
export default class Product {
  /** Bound from the route by withComponentInputBinding(); the route's canMatch has validated it. */
  readonly id = input.required<string>();
  protected readonly product = computed(() => makeProduct(Number(this.id())));
  protected readonly currencies = CURRENCY.values;
  /** The server's, from the declared cookie; the browser's, from the same cookie: they agree. */
  protected readonly currency = signal(requestCookie('currency', CURRENCY));
  protected readonly price = computed(() =>
    formatPrice(this.product().priceCents, this.currency()),
  );
  /** Only in the browser, after hydration: never part of the page every visitor shares. */
  protected readonly greeting = signal<string | undefined>(undefined);
  readonly #document = inject(DOCUMENT);

  constructor() {
    afterNextRender(() => {
      if (cookieValue(this.#document.cookie, 'sid')) {
        this.greeting.set('Welcome back! Your account is a click away.');
      }
    });
    // What this page is made from, for revalidation by group (docs/revalidation.md): this product
    // and the catalog. Read from the route here, where inputs are not bound yet (the route's
    // canMatch allows one spelling per id, so one group per product).
    const id = inject(ActivatedRoute).snapshot.paramMap.get('id');
    if (id !== null) {
      addCacheGroups(`product-${id}`, 'catalog');
    }
  }

  protected choose(currency: Currency): void {
    chooseCurrency(this.#document, currency);
    this.currency.set(currency);
  }
}
