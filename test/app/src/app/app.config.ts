import { provideHttpClient, withFetch } from '@angular/common/http';
import { ApplicationConfig, provideBrowserGlobalErrorListeners } from '@angular/core';
import {
  provideClientHydration,
  withEventReplay,
  withI18nSupport,
} from '@angular/platform-browser';
import { provideRouter, withComponentInputBinding } from '@angular/router';
import { personalParts } from './app.parts';
import { routes } from './app.routes';
import { providePersonalParts } from './personal-part';

/** Zoneless (Angular's default), hydrated, HttpClient over fetch: what a new app starts with. */
export const appConfig: ApplicationConfig = {
  providers: [
    provideBrowserGlobalErrorListeners(),
    provideRouter(routes, withComponentInputBinding()),
    // withI18nSupport: blocks marked i18n hydrate too, instead of being rendered afresh.
    provideClientHydration(withEventReplay(), withI18nSupport()),
    provideHttpClient(withFetch()),
    providePersonalParts(personalParts),
  ],
};
