import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { App } from './app';

describe('App shell', () => {
  beforeEach(() => {
    TestBed.configureTestingModule({ imports: [App], providers: [provideRouter([])] });
  });

  it('links to a page of every render mode', async () => {
    const fixture = TestBed.createComponent(App);
    await fixture.whenStable();
    const links = [...(fixture.nativeElement as HTMLElement).querySelectorAll('nav a')];
    expect(links.map((link) => link.getAttribute('href'))).toEqual(['/', '/products/1', '/dashboard']);
    expect(links.map((link) => link.textContent?.trim())).toEqual(['Home', 'Products', 'Dashboard']);
  });

  it('marks the current section, whatever the product id', async () => {
    TestBed.resetTestingModule();
    TestBed.configureTestingModule({ imports: [App], providers: [provideRouter([{ path: '**', children: [] }])] });
    const fixture = TestBed.createComponent(App);
    await TestBed.inject(Router).navigateByUrl('/products/42');
    await fixture.whenStable();
    const current = [...(fixture.nativeElement as HTMLElement).querySelectorAll('nav a[aria-current="page"]')];
    expect(current.map((link) => link.textContent?.trim())).toEqual(['Products']);
  });

  it('has a router outlet for the pages', () => {
    const fixture = TestBed.createComponent(App);
    expect((fixture.nativeElement as HTMLElement).querySelector('router-outlet')).not.toBeNull();
  });
});
