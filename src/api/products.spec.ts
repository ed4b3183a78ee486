import { isProductId } from '../app/products';
import { makeCatalog, makeProduct, MAX_PRODUCT_ID, plural } from './products';

describe('products', () => {
  it('accepts canonical ids from 1 to 999999 only', () => {
    for (const id of ['1', '7', '42', String(MAX_PRODUCT_ID)]) {
      expect(isProductId(id), id).toBe(true);
    }
    for (const id of [undefined, '', '0', '007', '-1', '1.5', '1e3', '1000000', 'abc', ' 1']) {
      expect(isProductId(id), String(id)).toBe(false);
    }
  });

  it('computes the same product for the same id', () => {
    expect(makeProduct(1234)).toEqual(makeProduct(1234));
  });

  it('computes different products for different ids', () => {
    const names = new Set(Array.from({ length: 200 }, (_, i) => makeProduct(i + 1).name));
    expect(names.size).toBe(200);
    expect(makeProduct(7).description).not.toEqual(makeProduct(8).description);
  });

  it('says 1 year, and years for every other count', () => {
    expect([0, 1, 2, 5].map((count) => plural(count, 'year', 'years'))).toEqual([
      '0 years',
      '1 year',
      '2 years',
      '5 years',
    ]);
    const warranties = Array.from(
      { length: 300 },
      (_, i) => makeProduct(i + 1).specs.find((spec) => spec.label === 'Warranty')?.value,
    );
    expect(warranties).toContain('1 year');
    expect(warranties.some((text) => text?.startsWith('1 years'))).toBe(false);
  });

  it('lists every category once in the catalog, each with products of its own', () => {
    const { categories } = makeCatalog();
    expect(new Set(categories.map((category) => category.slug)).size).toBe(8);
    for (const category of categories) {
      expect(category.featured.length, category.slug).toBe(4);
      for (const { id, name } of category.featured) {
        expect(makeProduct(id).category, name).toBe(category.slug);
        expect(makeProduct(id).name).toBe(name);
      }
    }
  });
});
