import type { PageHints } from '../hints/page-hints.ts';
import type { PageEngine } from './engine.ts';

/**
 * An engine whose pages carry their hints: the route's `modulepreload` tags that Angular's own
 * engine adds (before `</body>`, as it writes them) where the page lacks them — CommonEngine's pages
 * named one of the product route's three chunks, and hydrated 330–350 ms later under a mobile
 * network (docs/architecture.md#what-each-optimization-saves) — and, with `link`, the page's
 * `Link` header (hints/page-hints.ts), kept with the page in the render cache so that every answer
 * of it carries the same hints as the 103 before it.
 */
export function withPageHints(engine: PageEngine, hints: PageHints, link: boolean): PageEngine {
  return async (input, route, signal) => {
    const output = await engine(input, route, signal);
    const path = new URL(input.url).pathname;
    const header = link ? hints.header(path) : undefined;
    if (header !== undefined) {
      const own = output.headers.get('link');
      output.headers.set('link', own === null ? header : `${own}, ${header}`);
    }
    const chunks = hints.routeChunks(path);
    if (chunks.length === 0) {
      return output;
    }
    // Searched as they are (AngularNodeAppEngine's bytes are never decoded for this: they hold every tag).
    const missing = chunks.filter(
      (chunk) => !output.html.includes(`<link rel="modulepreload" href="${chunk}"`),
    );
    if (missing.length === 0) {
      return output;
    }
    const html = output.html.toString();
    const bodyEnd = html.lastIndexOf('</body>');
    if (bodyEnd === -1) {
      return output;
    }
    const tags = missing.map((chunk) => `<link rel="modulepreload" href="${chunk}">`);
    return { ...output, html: [html.slice(0, bodyEnd), ...tags, html.slice(bodyEnd)].join('\n') };
  };
}
