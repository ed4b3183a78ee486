import { RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { addCacheGroups } from './cache-groups';

/** Runs addCacheGroups in an injector providing `responseInit` (or none, as in the browser). */
function addWith(responseInit: ResponseInit | undefined, ...groups: string[]): void {
  TestBed.configureTestingModule({
    providers: responseInit ? [{ provide: RESPONSE_INIT, useValue: responseInit }] : [],
  });
  TestBed.runInInjectionContext(() => addCacheGroups(...groups));
}

describe('addCacheGroups', () => {
  it('sets Cache-Groups as a list of strings when the route set no headers', () => {
    const init: ResponseInit = { status: 200 };
    addWith(init, 'product-42', 'catalog');
    expect(init.headers).toEqual({ 'Cache-Groups': '"product-42", "catalog"' });
  });

  it('adds to a record in place (CommonEngine: the route headers), keeping the other headers', () => {
    const headers: Record<string, string> = {
      'Cache-Control': 'public, s-maxage=60',
      'cache-groups': '"catalog"',
    };
    const init: ResponseInit = { headers };
    addWith(init, 'product-7', 'catalog');
    expect(init.headers).toBe(headers);
    expect(headers).toEqual({
      'Cache-Control': 'public, s-maxage=60',
      'cache-groups': '"catalog", "product-7"',
    });
  });

  it('adds to Headers in place (Angular engine)', () => {
    const headers = new Headers({ 'Content-Type': 'text/html', 'Cache-Groups': '"a"' });
    addWith({ headers }, 'b', 'a', 'b');
    expect(headers.get('cache-groups')).toBe('"a", "b"');
  });

  it('adds to a list of pairs in place', () => {
    const headers: [string, string][] = [
      ['Vary', 'Accept-Encoding'],
      ['Cache-Groups', '"x"'],
    ];
    addWith({ headers }, 'y');
    expect(headers).toEqual([
      ['Vary', 'Accept-Encoding'],
      ['Cache-Groups', '"x", "y"'],
    ]);
  });

  it('escapes quotes and backslashes as RFC 8941 Strings require', () => {
    const init: ResponseInit = {};
    addWith(init, 'say "hi"', 'back\\slash', 'with space');
    expect(init.headers).toEqual({
      'Cache-Groups': '"say \\"hi\\"", "back\\\\slash", "with space"',
    });
  });

  it('does nothing in the browser, where there is no response', () => {
    expect(() => addWith(undefined, 'catalog')).not.toThrow();
  });

  it('throws a clear error for a group no String can hold', () => {
    TestBed.configureTestingModule({ providers: [{ provide: RESPONSE_INIT, useValue: {} }] });
    for (const bad of ['', 'é', 'tab\there', 'x'.repeat(257), 'line\nbreak']) {
      expect(() => TestBed.runInInjectionContext(() => addCacheGroups('ok', bad))).toThrowError(
        /a cache group must be 1 to 256 printable ASCII/,
      );
    }
  });
});
