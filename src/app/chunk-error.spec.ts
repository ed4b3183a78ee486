import { PLATFORM_ID } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { NavigationError } from '@angular/router';
import { isChunkLoadError, reloadOnChunkError } from './chunk-error';

describe('isChunkLoadError', () => {
  it('knows each browser’s words for a lazy chunk that failed to load', () => {
    for (const message of [
      'Failed to fetch dynamically imported module: https://example.com/chunk-ABCDEFGH.js',
      'error loading dynamically imported module: https://example.com/chunk-ABCDEFGH.js',
      'Importing a module script failed.',
    ]) {
      expect(isChunkLoadError(new TypeError(message))).toBe(true);
    }
    expect(isChunkLoadError(Object.assign(new Error('x'), { name: 'ChunkLoadError' }))).toBe(true);
  });

  it('leaves every other failure alone', () => {
    for (const error of [
      new Error('guard said no'),
      new TypeError('x is undefined'),
      null,
      'text',
    ]) {
      expect(isChunkLoadError(error)).toBe(false);
    }
  });
});

describe('reloadOnChunkError', () => {
  const failed = (error: unknown) => new NavigationError(1, '/dashboard', error);

  it('does nothing on the server, or for another error', () => {
    sessionStorage.clear();
    for (const [platform, error] of [
      ['server', new TypeError('Failed to fetch dynamically imported module: /chunk-A.js')],
      ['browser', new Error('a guard threw')],
    ] as const) {
      TestBed.resetTestingModule();
      TestBed.configureTestingModule({ providers: [{ provide: PLATFORM_ID, useValue: platform }] });
      TestBed.runInInjectionContext(() => reloadOnChunkError(failed(error)));
    }
    expect(sessionStorage.getItem('chunk-error-reload')).toBeNull();
  });

  it('does not reload the same address twice in a row', () => {
    sessionStorage.setItem('chunk-error-reload', `${Date.now()} /dashboard`);
    TestBed.configureTestingModule({ providers: [{ provide: PLATFORM_ID, useValue: 'browser' }] });
    TestBed.runInInjectionContext(() =>
      reloadOnChunkError(failed(new TypeError('Importing a module script failed.'))),
    );
    // Had it reloaded, it would have written a new time for the address.
    expect(sessionStorage.getItem('chunk-error-reload')).toMatch(/ \/dashboard$/);
  });
});
