import { provideHttpClient, withFetch } from '@angular/common/http';
import type { ApplicationConfig } from '@angular/core';
import { provideClientHydration, withHttpTransferCacheOptions } from '@angular/platform-browser';
import { provideApiTransferCache } from './api-url';
import { personalParts } from './app.parts';
import { providePersonalParts } from './personal-part';

/**
 * The config of a personal part's render on the server (main.server.ts renderPart): what the parts
 * need and no router, since a part render never navigates or resolves a route. The API's URL is
 * API_BASE_URL's own (api-url.ts), mapped to the page's origin for the transfer cache as in a page's
 * render. The transfer cache keeps what a part fetched with the visitor's cookie, private answers
 * too: it goes into the part's inline state, for this visitor's browser alone, never into a shared
 * page.
 */
export const partsConfig: ApplicationConfig = {
  providers: [
    provideHttpClient(withFetch()),
    provideClientHydration(
      withHttpTransferCacheOptions({
        includeRequestsWithAuthHeaders: true,
        includeNonCacheableRequests: true,
      }),
    ),
    provideApiTransferCache(),
    providePersonalParts(personalParts),
  ],
};
