import type { RenderInput } from './render-inputs';

/** The currencies a visitor may choose (the `currency` cookie): a closed set, EUR by default. */
export const CURRENCY: RenderInput<'EUR' | 'USD' | 'GBP'> = {
  values: ['EUR', 'USD', 'GBP'],
  default: 'EUR',
};
