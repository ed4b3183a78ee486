import { isPlatformServer } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import { Component, inject, PLATFORM_ID, signal } from '@angular/core';
import { ActivatedRoute } from '@angular/router';

interface Catalog {
  name: string;
}
interface Item {
  id: string;
  title: string;
}

/**
 * A page made of data, as real apps are: during the render it asks an API (TEST_DATA_API, an
 * absolute URL on the server) for the catalog every page shares and for its item, with HttpClient.
 * The data-page tests (test/server/data-pages.test.mjs) count what reaches the API. TEST_DATA_API=own
 * asks the app's own API (src/api.ts) where the origin says it is, API_URL, as the demo's pages do
 * (test/server/app-api.test.mjs).
 */
@Component({
  selector: 'app-data',
  template: `
    <h1>Data</h1>
    <p class="catalog">{{ catalog() }}</p>
    <p class="item">{{ item() }}</p>
  `,
})
export default class Data {
  protected readonly catalog = signal('no catalog');
  protected readonly item = signal('no item');

  constructor() {
    const env = isPlatformServer(inject(PLATFORM_ID))
      ? ((globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ??
        {})
      : {};
    const given = env['TEST_DATA_API'] ?? '';
    const api = given === 'own' ? (env['API_URL'] ?? '') : given;
    if (api === '') {
      return;
    }
    const route = inject(ActivatedRoute).snapshot;
    const id = route.paramMap.get('id') ?? '';
    const what = route.routeConfig?.path?.startsWith('data-private') ? 'me' : `items/${id}`;
    const http = inject(HttpClient);
    http.get<Catalog>(`${api}/catalog`, { headers: { 'Cache-Groups': '"catalog"' } }).subscribe({
      next: (catalog) => this.catalog.set(catalog.name),
      error: () => this.catalog.set('catalog unavailable'),
    });
    http.get<Item>(`${api}/${what}`).subscribe({
      next: (item) => this.item.set(item.title),
      error: () => this.item.set('data unavailable'),
    });
  }
}
