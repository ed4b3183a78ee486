import { provideHttpClient, withFetch } from '@angular/common/http';
import { ApplicationConfig, provideBrowserGlobalErrorListeners } from '@angular/core';
import {
  provideClientHydration,
  withEventReplay,
  withI18nSupport,
} from '@angular/platform-browser';
import {
  TitleStrategy,
  provideRouter,
  withComponentInputBinding,
  withNavigationErrorHandler,
} from '@angular/router';
import { personalParts } from './app.parts';
import { reloadOnChunkError } from './chunk-error';
import { PageTitleStrategy } from './page-title';
import { routes } from './app.routes';
import { providePersonalParts } from './personal-part';

export const appConfig: ApplicationConfig = {
  providers: [
    provideBrowserGlobalErrorListeners(),
    // After a deploy, a lazy chunk of the previous build may be gone: load the page anew, once.
    provideRouter(
      routes,
      withComponentInputBinding(),
      withNavigationErrorHandler(reloadOnChunkError),
    ),
    // withI18nSupport: blocks marked i18n hydrate too, instead of being rendered afresh.
    provideClientHydration(withEventReplay(), withI18nSupport()),
    provideHttpClient(withFetch()),
    { provide: TitleStrategy, useClass: PageTitleStrategy },
    // The greeting on the product page (app.parts.ts): its placeholder in the shared page, the
    // visitor's own render from the origin, re-created in the browser from its inline state.
    providePersonalParts(personalParts),
  ],
};
