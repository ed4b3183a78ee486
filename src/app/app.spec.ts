import { TestBed } from '@angular/core/testing';
import { Router, provideRouter, withComponentInputBinding } from '@angular/router';
import { App } from './app';
import { routes } from './app.routes';

describe('App shell', () => {
  beforeEach(() => {
    TestBed.configureTestingModule({
      imports: [App],
      providers: [provideRouter(routes, withComponentInputBinding())],
    });
  });

  /** The shell at `url`, and the labels of the nav links marked as the current page. */
  async function at(url: string) {
    const fixture = TestBed.createComponent(App);
    await TestBed.inject(Router).navigateByUrl(url);
    await fixture.whenStable();
    const element = fixture.nativeElement as HTMLElement;
    const current = [...element.querySelectorAll('nav a[aria-current="page"]')].map((link) =>
      link.textContent?.trim(),
    );
    return { fixture, element, current };
  }

  it('links to a page of every render mode', async () => {
    const fixture = TestBed.createComponent(App);
    await fixture.whenStable();
    const links = [...(fixture.nativeElement as HTMLElement).querySelectorAll('nav a')];
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      '/',
      '/products/1',
      '/dashboard',
      '/account',
    ]);
    expect(links.map((link) => link.textContent?.trim())).toEqual([
      'Home',
      'Products',
      'Dashboard',
      'Account',
    ]);
  });

  it('marks the current section with aria-current', async () => {
    expect(await at('/')).toMatchObject({ current: ['Home'] });
    TestBed.resetTestingModule();
    TestBed.configureTestingModule({
      imports: [App],
      providers: [provideRouter(routes, withComponentInputBinding())],
    });
    expect(await at('/dashboard')).toMatchObject({ current: ['Dashboard'] });
  });

  it('marks Products on every product page, whatever the id', async () => {
    expect((await at('/products/42')).current).toEqual(['Products']);
  });

  it('moves the mark on client navigation', async () => {
    const { fixture, element } = await at('/products/42');
    await TestBed.inject(Router).navigateByUrl('/');
    await fixture.whenStable();
    expect(
      [...element.querySelectorAll('nav a[aria-current]')].map((link) => link.textContent?.trim()),
    ).toEqual(['Home']);
  });

  it('marks no section on pages outside the nav and on the not-found page', async () => {
    for (const url of ['/async-work?http=0', '/products/0', '/no/such/page']) {
      TestBed.resetTestingModule();
      TestBed.configureTestingModule({
        imports: [App],
        providers: [provideRouter(routes, withComponentInputBinding())],
      });
      expect(await at(url), url).toMatchObject({ current: [] });
    }
  });

  it('leaves the links alone until the router has navigated (hydration keeps the server marks)', () => {
    const fixture = TestBed.createComponent(App);
    fixture.detectChanges();
    const products = (fixture.nativeElement as HTMLElement).querySelectorAll('nav a')[1];
    // What the server's HTML says, before the browser's first navigation ends.
    products.setAttribute('aria-current', 'page');
    fixture.detectChanges();
    expect(products.getAttribute('aria-current')).toBe('page');
  });

  it('has a router outlet for the pages', () => {
    const fixture = TestBed.createComponent(App);
    expect((fixture.nativeElement as HTMLElement).querySelector('router-outlet')).not.toBeNull();
  });
});
