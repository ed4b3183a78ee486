// The styles a visitor's part brings that its page lacks. A part's render adds its components'
// styles to its own document's head (renderPart's `styles`), most of which the page already has:
// on the demo's product page 26.4 of the part's 27.5 KB were the page's own Material styles, sent
// again uncompressed inside every personal answer: the greeting painted 120–240 ms after the page's
// LCP in `npm run bench:browser`, and 0–12 ms after it without them.
/** A `<style>` element: its text in group 1. */
const STYLE = /<style\b[^>]*>([\s\S]*?)<\/style>/g;
/** Style sets remembered per page: a page's parts bring the same few. */
const MAX_REMEMBERED = 16;

const remembered = new WeakMap<Buffer, Map<string, string>>();

/** The `<style>` elements of `styles` whose text no `<style>` of `page` already holds. */
export function newStyles(page: Buffer, styles: string): string {
  if (styles === '') {
    return '';
  }
  let known = remembered.get(page);
  const hit = known?.get(styles);
  if (hit !== undefined) {
    return hit;
  }
  let kept = '';
  for (const style of styles.matchAll(STYLE)) {
    // Its text closed by `</style>`: inside a style element of the page, not merely quoted.
    if (style[1] === '' || page.indexOf(`${style[1]}</style>`) === -1) {
      kept += style[0];
    }
  }
  if (known === undefined) {
    known = new Map();
    remembered.set(page, known);
  }
  if (known.size < MAX_REMEMBERED) {
    known.set(styles, kept);
  }
  return kept;
}
