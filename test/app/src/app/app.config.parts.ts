import { provideHttpClient, withFetch } from '@angular/common/http';
import type { ApplicationConfig } from '@angular/core';
import { provideClientHydration, withHttpTransferCacheOptions } from '@angular/platform-browser';
import { personalParts } from './app.parts';
import { providePersonalParts } from './personal-part';

/**
 * The config of a personal part's render on the server (main.server.ts renderPart): what the parts
 * need and no router, since a part render never navigates. The transfer cache keeps what the part
 * fetched with the visitor's cookie, however private, for this visitor's browser alone: the part's
 * inline state goes into no shared page.
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
    providePersonalParts(personalParts),
  ],
};
