import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { App } from './app';
import { routes } from './app.routes';
import { serverRoutes } from './app.routes.server';

describe('App', () => {
  beforeEach(() => {
    TestBed.configureTestingModule({ imports: [App], providers: [provideRouter([])] });
  });

  it('shows the brand, linking home', async () => {
    const fixture = TestBed.createComponent(App);
    await fixture.whenStable();
    const brand = (fixture.nativeElement as HTMLElement).querySelector('a.brand');
    expect(brand?.getAttribute('href')).toBe('/');
    expect(brand?.textContent?.trim()).toBe('SSR Origin');
  });

  it('declares a render mode for every route', () => {
    expect(serverRoutes.map((route) => route.path)).toEqual(routes.map((route) => route.path));
  });
});
