// A localized build's pages say their language whichever engine rendered them.
import { languageHeaders, type LocaleMap, pageLanguage } from '../locales/locale-sites.ts';
import type { PageEngine } from './engine.ts';

/**
 * An engine whose pages carry their language headers, whatever the engine set: Angular's engine
 * sends `Content-Language` itself, CommonEngine none.
 */
export function withLanguageHeaders(engine: PageEngine, map: LocaleMap): PageEngine {
  return async (input, route, signal) => {
    const output = await engine(input, route, signal);
    const said = pageLanguage(map, new URL(input.url).pathname);
    if (said !== undefined) {
      const [, language, , alternates] = languageHeaders(said, output.status);
      output.headers.set('content-language', language);
      if (alternates !== undefined) {
        output.headers.append('link', alternates);
      }
    }
    return output;
  };
}
