/**
 * The demo's data as its API sends it (src/api/, `GET /api/products/:id` and `GET /api/catalog`):
 * the app never computes a product, it asks the API for it during the render, as real apps do.
 */
export interface Product {
  id: number;
  name: string;
  /** The slug of its category in the catalog (`lamps`). */
  category: string;
  /** In euro cents; shown in the visitor's currency (currency.ts). */
  priceCents: number;
  rating: number;
  description: string;
  specs: { label: string; value: string }[];
}

/** A product as the catalog lists it. */
export type ProductSummary = Pick<Product, 'id' | 'name' | 'priceCents' | 'rating'>;

export interface Category {
  slug: string;
  name: string;
  featured: ProductSummary[];
}

/** What every page of the shop shares: the categories, with a few products each. */
export interface Catalog {
  categories: Category[];
}

/** Product ids are 1..999999 written without leading zeros: one canonical URL per product. */
export function isProductId(value: string | undefined): boolean {
  return value !== undefined && /^[1-9]\d{0,5}$/.test(value);
}
