import { Component, computed, inject, input } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatCardModule } from '@angular/material/card';
import { MatListModule } from '@angular/material/list';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { addCacheGroups } from '../cache-groups';
import { makeProduct } from '../products';

/** Rendered per request on the server: the content depends on the :id route parameter. */
@Component({
  selector: 'app-product',
  imports: [MatCardModule, MatListModule, MatButtonModule, RouterLink],
  template: `
    @let p = product();
    <mat-card appearance="outlined">
      <mat-card-header>
        <mat-card-title
          ><h1>{{ p.name }}</h1></mat-card-title
        >
        <mat-card-subtitle>{{ p.price }} · {{ '★'.repeat(p.rating) }}</mat-card-subtitle>
      </mat-card-header>
      <mat-card-content>
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
