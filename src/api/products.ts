// The demo's data: what a database would hold, computed from a product's id alone, so that every id
// answers different content without one. Only the API (api.ts) reads it; the app asks the API.
import type { Catalog, Category, Product } from '../app/products';

/** The highest product id: ids are 1..MAX_PRODUCT_ID. */
export const MAX_PRODUCT_ID = 999_999;

const ADJECTIVES = [
  'Compact',
  'Rugged',
  'Silent',
  'Modular',
  'Wireless',
  'Foldable',
  'Solar',
  'Smart',
];
/** Each noun is a category: a lamp is in `lamps`. */
const NOUNS = ['Lamp', 'Kettle', 'Backpack', 'Speaker', 'Desk', 'Bicycle', 'Camera', 'Keyboard'];
const MATERIALS = ['aluminium', 'oak', 'recycled plastic', 'steel', 'bamboo', 'carbon fibre'];
const COLOURS = ['graphite', 'sand', 'forest green', 'ocean blue', 'signal red', 'snow white'];
/** The catalog features this many products of each category. */
const FEATURED = 4;
/** Featured ids are drawn across the whole range (nearby ids make alike products). */
const FEATURED_STRIDE = 7_919;

const pluralRules = new Intl.PluralRules('en');

/** `1 year`, `2 years`, `0 years`: English plural rules, not "year(s)". */
export function plural(count: number, one: string, other: string): string {
  return `${count} ${pluralRules.select(count) === 'one' ? one : other}`;
}

/** xorshift32: a tiny deterministic generator, so the same id always makes the same product. */
function generator(seed: number): () => number {
  let state = seed ^ 0x9e3779b9 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

const slugOf = (noun: string) => `${noun.toLowerCase()}s`;

/** The product an id names (1..MAX_PRODUCT_ID; the API checks the id first). */
export function makeProduct(id: number): Product {
  const next = generator(id);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const adjective = pick(ADJECTIVES);
  const noun = pick(NOUNS);
  const name = `${adjective} ${noun} ${id}`;
  const cents = 999 + Math.floor(next() * 99_000);
  return {
    id,
    name,
    category: slugOf(noun),
    priceCents: cents,
    rating: 1 + Math.floor(next() * 5),
    description: `The ${name} is made of ${pick(MATERIALS)} and comes in ${pick(COLOURS)}.`,
    specs: [
      { label: 'Weight', value: `${(0.2 + next() * 12).toFixed(1)} kg` },
      { label: 'Warranty', value: plural(1 + Math.floor(next() * 5), 'year', 'years') },
      { label: 'In stock', value: String(Math.floor(next() * 500)) },
      { label: 'SKU', value: `SO-${id.toString(36).toUpperCase().padStart(4, '0')}` },
    ],
  };
}

/** Every category, each with a few of its products: what every page's navigation shows. */
export function makeCatalog(): Catalog {
  const categories: Category[] = NOUNS.map((noun) => ({
    slug: slugOf(noun),
    name: slugOf(noun).replace(/^./, (first) => first.toUpperCase()),
    featured: [],
  }));
  const bySlug = new Map(categories.map((category) => [category.slug, category]));
  for (let k = 0; categories.some((c) => c.featured.length < FEATURED); k++) {
    const id = ((k * FEATURED_STRIDE) % MAX_PRODUCT_ID) + 1;
    const { name, category, priceCents, rating } = makeProduct(id);
    const featured = bySlug.get(category)!.featured;
    if (featured.length < FEATURED) {
      featured.push({ id, name, priceCents, rating });
    }
  }
  return { categories };
}
