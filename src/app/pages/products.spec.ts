import { RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { makeCatalog } from '../../api/products';
import { provideApiInProcess } from '../api-in-process';
import { API_BASE_URL } from '../api-url';
import Products from './products';

describe('Products', () => {
  async function render(providers: unknown[] = []) {
    TestBed.configureTestingModule({
      providers: [provideRouter([]), provideApiInProcess(), ...providers],
    });
    const fixture = TestBed.createComponent(Products);
    await fixture.whenStable();
    return fixture.nativeElement as HTMLElement;
  }

  it("lists every category of the API's catalog, each an anchor, with links to its products", async () => {
    const element = await render();
    const { categories } = makeCatalog();
    expect([...element.querySelectorAll('h2')].map((h) => [h.id, h.textContent])).toEqual(
      categories.map((c) => [c.slug, c.name]),
    );
    const links = [...element.querySelectorAll('a')].map((a) => a.getAttribute('href'));
    expect(links).toEqual(categories.flatMap((c) => c.featured.map((p) => `/products/${p.id}`)));
  });

  it('says the catalog is unavailable, with a 503, when the API cannot answer', async () => {
    const responseInit: ResponseInit = { status: 200 };
    const element = await render([
      { provide: RESPONSE_INIT, useValue: responseInit },
      { provide: API_BASE_URL, useValue: 'http://localhost/down' },
    ]);
    expect(element.querySelector('.unavailable')?.textContent).toMatch(/could not be loaded/);
    expect(responseInit.status).toBe(503);
  });
});
