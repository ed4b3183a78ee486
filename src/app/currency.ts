import type { RenderInput } from './render-inputs';

export type Currency = 'EUR' | 'USD' | 'GBP';

/**
 * The currency a visitor chose (the `currency` cookie): a closed set, EUR by default. The product
 * route declares it (app.routes.server.ts), so a shared product page exists once per currency.
 */
export const CURRENCY: RenderInput<Currency> = { values: ['EUR', 'USD', 'GBP'], default: 'EUR' };

/** Fixed rates from euros: a demo's prices, not a market's. */
const PER_EURO: Record<Currency, number> = { EUR: 1, USD: 1.08, GBP: 0.85 };
const SYMBOL: Record<Currency, string> = { EUR: '€', USD: '$', GBP: '£' };

/** A price in euro cents, in `currency`: `€12.34`, `$13.33`, `£10.49`. */
export function formatPrice(euroCents: number, currency: Currency): string {
  const cents = Math.round(euroCents * PER_EURO[currency]);
  return `${SYMBOL[currency]}${(cents / 100).toFixed(2)}`;
}

/** Remembers the visitor's choice for a year: the next page the server renders is in it. */
export function chooseCurrency(document: Document, currency: Currency): void {
  document.cookie = `currency=${currency}; path=/; max-age=31536000; samesite=lax`;
}
