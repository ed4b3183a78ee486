import { HttpClient } from '@angular/common/http';
import { Component, REQUEST, computed, inject } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { API_URL, ProductData } from '../api';

const RATES: Record<string, number> = { EUR: 1, USD: 1.1, GBP: 0.85 };

/** A cookie's value in the request's Cookie header, as the Express app had it. */
function cookie(header: string | null | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const [key, ...value] = pair.split('=');
    if (key.trim() === name) return value.join('=').trim();
  }
  return undefined;
}

@Component({
  selector: 'app-product',
  imports: [RouterLink],
  template: `
    @if (visitor) {
      <p class="greeting">Welcome back, {{ visitor }}!</p>
    }
    @if (product(); as p) {
      <h2>{{ p.name }}</h2>
      <p class="price">{{ price() }} {{ currency }}</p>
    }
    <a routerLink="/">Home</a>
  `,
})
export class Product {
  private readonly cookies = inject(REQUEST, { optional: true })?.headers.get('cookie');
  protected readonly currency = (() => {
    const asked = cookie(this.cookies, 'currency');
    return asked && asked in RATES ? asked : 'EUR';
  })();
  protected readonly visitor = cookie(this.cookies, 'sid');
  private readonly id = inject(ActivatedRoute).snapshot.paramMap.get('id');
  protected readonly product = toSignal(
    inject(HttpClient).get<ProductData>(`${inject(API_URL)}/products/${this.id}`),
  );
  protected readonly price = computed(() => {
    const product = this.product();
    return product ? (product.priceEur * RATES[this.currency]).toFixed(2) : '';
  });
}
