import { isPlatformBrowser, Location } from '@angular/common';
import { inject, PLATFORM_ID } from '@angular/core';
import type { NavigationError } from '@angular/router';

/** How browsers word a lazy chunk that failed to load (Chromium, Firefox, Safari), and webpack's name for it. */
const CHUNK_FAILED =
  /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|ChunkLoadError/i;

/** Where the last reload is remembered, so that a chunk that stays missing cannot loop the page. */
const LAST_RELOAD = 'chunk-error-reload';
/** A second failure for the same address within this long shows the error instead. */
const RELOAD_AGAIN_AFTER_MS = 10_000;

/** Whether a navigation failed because a lazy chunk of the route could not be loaded. */
export function isChunkLoadError(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  return CHUNK_FAILED.test(`${String(name)} ${String(message)}`);
}

/**
 * For `withNavigationErrorHandler`: after a deploy, a page of the previous build may ask for a lazy
 * chunk the servers no longer have (angular/angular#44775). The page then loads the address the
 * user was going to, once: it gets the new build. A second failure for the same address soon after
 * is left to the router (the chunk is missing from the new build too: reloading would loop).
 */
export function reloadOnChunkError(error: NavigationError): void {
  if (!isPlatformBrowser(inject(PLATFORM_ID)) || !isChunkLoadError(error.error)) {
    return;
  }
  const last = sessionStorage.getItem(LAST_RELOAD)?.split(' ');
  if (last?.[1] === error.url && Date.now() - Number(last[0]) < RELOAD_AGAIN_AFTER_MS) {
    return;
  }
  sessionStorage.setItem(LAST_RELOAD, `${Date.now()} ${error.url}`);
  // The router's URL is relative to the base href: under a locale's prefix (`/fr/`), `/dashboard`
  // is the address of no page.
  window.location.assign(inject(Location).prepareExternalUrl(error.url));
}
