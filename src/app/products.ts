/** A product computed from its id alone, so every id renders different content without a database. */
export interface Product {
  id: number;
  name: string;
  /** In euro cents; shown in the visitor's currency (currency.ts). */
  priceCents: number;
  /** In euros. */
  price: string;
  rating: number;
  description: string;
  specs: { label: string; value: string }[];
}

const MAX_ID = 999_999;
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
const NOUNS = ['Lamp', 'Kettle', 'Backpack', 'Speaker', 'Desk', 'Bicycle', 'Camera', 'Keyboard'];
const MATERIALS = ['aluminium', 'oak', 'recycled plastic', 'steel', 'bamboo', 'carbon fibre'];
const COLOURS = ['graphite', 'sand', 'forest green', 'ocean blue', 'signal red', 'snow white'];

/** Product ids are 1..999999 written without leading zeros: one canonical URL per product. */
export function isProductId(value: string | undefined): boolean {
  return value !== undefined && /^[1-9]\d{0,5}$/.test(value) && Number(value) <= MAX_ID;
}

const pluralRules = new Intl.PluralRules('en');

/** `1 year`, `2 years`, `0 years`: English plural rules, not "year(s)". */
export function plural(count: number, one: string, other: string): string {
  return `${count} ${pluralRules.select(count) === 'one' ? one : other}`;
}

/** xorshift32: a tiny deterministic generator, so the server and the browser compute the same product. */
function generator(seed: number): () => number {
  let state = seed ^ 0x9e3779b9 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

export function makeProduct(id: number): Product {
  const next = generator(id);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const name = `${pick(ADJECTIVES)} ${pick(NOUNS)} ${id}`;
  const cents = 999 + Math.floor(next() * 99_000);
  return {
    id,
    name,
    priceCents: cents,
    // Euros as currency.ts writes them (products.ts imports nothing: tests read it with Node).
    price: `€${(cents / 100).toFixed(2)}`,
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
