import { InjectionToken, TransferState, inject, makeStateKey } from '@angular/core';

/** The API the pages read, as an absolute URL: the server's API_URL, handed to the browser. */
export const API_URL = new InjectionToken<string>('API_URL', {
  providedIn: 'root',
  factory: () => inject(TransferState).get(API_URL_KEY, ''),
});

export const API_URL_KEY = makeStateKey<string>('api-url');

export interface ProductData {
  id: number;
  name: string;
  priceEur: number;
}
