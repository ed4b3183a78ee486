import { Component, computed, inject, input } from '@angular/core';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { addCacheGroups } from '../cache-groups';
import { makeProduct } from '../products';

/**
 * Rendered per request with a route parameter and a shared-cache policy: the page the render
 * cache, the render limiter and the Host/request-target tests load. Every id renders different
 * content (tests compare against makeProduct from ../products).
 */
@Component({
  selector: 'app-product',
  imports: [RouterLink],
  template: `
    @let p = product();
    <article class="product">
      <h1>{{ p.name }}</h1>
      <p class="price">{{ p.price }} · {{ '★'.repeat(p.rating) }}</p>
      <p class="description">{{ p.description }}</p>
      <p class="note" i18n="@@productNote">Prices include VAT.</p>
      <dl class="specs">
        @for (spec of p.specs; track spec.label) {
          <dt>{{ spec.label }}</dt>
          <dd>{{ spec.value }}</dd>
        }
      </dl>
      <nav>
        @if (p.id > 1) {
          <a [routerLink]="['/products', p.id - 1]">Previous</a>
        }
        <a [routerLink]="['/products', p.id + 1]">Next</a>
      </nav>
    </article>
  `,
})
export default class Product {
  /** Bound from the route by withComponentInputBinding(); the route's canMatch has validated it. */
  readonly id = input.required<string>();
  protected readonly product = computed(() => makeProduct(Number(this.id())));

  constructor() {
    // What this page is made from, for revalidation by group (docs/revalidation.md): this product
    // and the catalog. Read from the route here, where inputs are not bound yet (the route's
    // canMatch allows one spelling per id, so one group per product).
    const id = inject(ActivatedRoute).snapshot.paramMap.get('id');
    if (id !== null) {
      addCacheGroups(`product-${id}`, 'catalog');
    }
  }
}
