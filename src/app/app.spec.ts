import { TestBed } from '@angular/core/testing';
import { Router, provideRouter, withComponentInputBinding } from '@angular/router';
import { provideApiInProcess } from './api-in-process';
import { App } from './app';
import { routes } from './app.routes';

// The shell's nav, whatever links it holds: each is read from the rendered shell, so changing the
// app's pages and links changes nothing here.
describe('App shell', () => {
  beforeEach(() => {
    TestBed.configureTestingModule({
      imports: [App],
      providers: [provideRouter(routes, withComponentInputBinding()), provideApiInProcess()],
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

  /** A fresh shell and router, as a new page load has. */
  function reset() {
    TestBed.resetTestingModule();
    TestBed.configureTestingModule({
      imports: [App],
      providers: [provideRouter(routes, withComponentInputBinding()), provideApiInProcess()],
    });
  }

  /** The nav's links as the shell renders them: where each goes and what it says. */
  async function navLinks() {
    const fixture = TestBed.createComponent(App);
    await fixture.whenStable();
    return [...(fixture.nativeElement as HTMLElement).querySelectorAll('nav a')].map((link) => ({
      href: link.getAttribute('href') ?? '',
      label: link.textContent?.trim() ?? '',
    }));
  }

  it('has a nav of labelled links to pages of the app', async () => {
    const links = await navLinks();
    expect(links.length).toBeGreaterThan(0);
    for (const { href, label } of links) {
      expect(href, label).toMatch(/^\//);
      expect(label, href).not.toBe('');
    }
    expect(new Set(links.map(({ href }) => href)).size, 'no two links to one page').toBe(
      links.length,
    );
  });

  it('marks each link, and only it, on the page it links to', async () => {
    for (const { href, label } of await navLinks()) {
      reset();
      expect((await at(href)).current, href).toEqual([label]);
    }
  });

  it('moves the mark on client navigation', async () => {
    const links = await navLinks();
    const [first, last] = [links[0], links.at(-1)!];
    const { fixture, element } = await at(last.href);
    await TestBed.inject(Router).navigateByUrl(first.href);
    await fixture.whenStable();
    expect(
      [...element.querySelectorAll('nav a[aria-current]')].map((link) => link.textContent?.trim()),
    ).toEqual([first.label]);
  });

  it('marks no section on the not-found page', async () => {
    expect(await at('/no/such/page')).toMatchObject({ current: [] });
  });

  it('leaves the links alone until the router has navigated (hydration keeps the server marks)', () => {
    const fixture = TestBed.createComponent(App);
    fixture.detectChanges();
    const last = [...(fixture.nativeElement as HTMLElement).querySelectorAll('nav a')].at(-1)!;
    // What the server's HTML says, before the browser's first navigation ends.
    last.setAttribute('aria-current', 'page');
    fixture.detectChanges();
    expect(last.getAttribute('aria-current')).toBe('page');
  });

  it('has a router outlet for the pages', () => {
    const fixture = TestBed.createComponent(App);
    expect((fixture.nativeElement as HTMLElement).querySelector('router-outlet')).not.toBeNull();
  });
});
