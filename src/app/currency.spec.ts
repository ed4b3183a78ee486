import { CURRENCY, chooseCurrency, formatPrice } from './currency';

describe('currency', () => {
  it('shows a price in euro cents in each currency the route declares', () => {
    expect(formatPrice(1234, 'EUR')).toBe('€12.34');
    expect(formatPrice(1234, 'USD')).toBe('$13.33');
    expect(formatPrice(1234, 'GBP')).toBe('£10.49');
    expect(CURRENCY.values).toContain(CURRENCY.default);
  });

  it('remembers the choice in the cookie the route declares', () => {
    chooseCurrency(document, 'GBP');
    expect(document.cookie).toContain('currency=GBP');
    chooseCurrency(document, 'EUR');
  });
});
