import { PLATFORM_ID, REQUEST_CONTEXT, RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { TitleStrategy, provideRouter, withComponentInputBinding } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import { makeCatalog, makeProduct } from '../../api/products';
import { provideApiInProcess } from '../api-in-process';
import { API_BASE_URL } from '../api-url';
import { personalParts } from '../app.parts';
import { routes } from '../app.routes';
import { APP_NAME, PageTitleStrategy } from '../page-title';
import { providePersonalParts } from '../personal-part';
import Product from './product';

/** The app's routes, their data from the demo's API in this process (api-in-process.ts). */
const withRoutes = [
  provideRouter(routes, withComponentInputBinding()),
  { provide: TitleStrategy, useClass: PageTitleStrategy },
  provideApiInProcess(),
  providePersonalParts(personalParts),
];

/** The document's title and description tags once the app's own routes have shown `url`. */
async function headAt(url: string, providers: unknown[] = []) {
  TestBed.configureTestingModule({ providers: [...withRoutes, ...providers] });
  const harness = await RouterTestingHarness.create(url);
  const descriptions = TestBed.inject(Meta)
    .getTags('name="description"')
    .map((tag) => tag.content);
  return { title: TestBed.inject(Title).getTitle(), descriptions, harness };
}

describe('Product', () => {
  async function render(id: number, providers: unknown[] = []) {
    TestBed.configureTestingModule({
      providers: [
        provideRouter([]),
        provideApiInProcess(),
        providePersonalParts(personalParts),
        ...providers,
      ],
    });
    const fixture = TestBed.createComponent(Product);
    fixture.componentRef.setInput('product', { ok: true, value: makeProduct(id) });
    await fixture.whenStable();
    return fixture.nativeElement as HTMLElement;
  }

  it('renders the product the API sent, in its category of the catalog', async () => {
    const element = await render(7);
    const expected = makeProduct(7);
    expect(element.querySelector('h1')?.textContent).toBe(expected.name);
    expect(element.querySelector('.description')?.textContent).toBe(expected.description);
    expect(element.querySelector('.price')?.textContent).toBe(
      `€${(expected.priceCents / 100).toFixed(2)}`,
    );
    const category = makeCatalog().categories.find((c) => c.slug === expected.category)!;
    const crumbs = [...element.querySelectorAll('.breadcrumb a')];
    expect(crumbs.map((a) => a.textContent)).toEqual(['Shop', category.name]);
    expect(crumbs[1].getAttribute('href')).toBe(`/products#${category.slug}`);
  });

  it("holds the greeting part's placeholder alone on the server, between the origin's markers", async () => {
    const element = await render(7, [
      { provide: PLATFORM_ID, useValue: 'server' },
      { provide: REQUEST_CONTEXT, useValue: { personalParts: { token: 'T' } } },
    ]);
    const part = element.querySelector('personal-part')!;
    expect(part.querySelector('template[data-origin-part]')?.getAttribute('data-origin-part')).toBe(
      `T:0:greeting:${btoa('{"product":7}').replace(/=+$/, '')}`,
    );
    expect(part.querySelector('.greeting')?.textContent).toBe('Sign in to keep a cart.');
    expect(part.querySelector('app-visitor-greeting')).toBeNull();
  });

  it('shows the greeting part in the browser: the sign-in link to a visitor without a session', async () => {
    const element = await render(7);
    const part = element.querySelector('personal-part app-visitor-greeting');
    expect(part?.querySelector('.greeting a')?.getAttribute('href')).toBe('/account');
    expect(element.querySelector('template')).toBeNull();
  });

  it('links to the previous and next products', async () => {
    const element = await render(7);
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) =>
      a.getAttribute('href'),
    );
    expect(hrefs).toEqual(['/products/6', '/products/8']);
  });

  it('has no previous link on the first product', async () => {
    const element = await render(1);
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) =>
      a.getAttribute('href'),
    );
    expect(hrefs).toEqual(['/products/2']);
  });

  it("has the product's own title and description, from the API", async () => {
    const product = makeProduct(7);
    const { title, descriptions } = await headAt('/products/7');
    expect({ title, descriptions }).toEqual({
      title: `${product.name} · ${APP_NAME}`,
      descriptions: [product.description],
    });
  });

  it('declares its cache groups on the server: the product and the catalog', async () => {
    const responseInit: ResponseInit = { status: 200 };
    await headAt('/products/7', [{ provide: RESPONSE_INIT, useValue: responseInit }]);
    expect(responseInit.headers).toEqual({ 'Cache-Groups': '"product-7", "catalog"' });
  });

  it('says it is unavailable, with a 503 no cache keeps, when the API cannot answer', async () => {
    const responseInit: ResponseInit = { status: 200 };
    const { title, descriptions, harness } = await headAt('/products/7', [
      { provide: RESPONSE_INIT, useValue: responseInit },
      // An address the API does not answer: as a server that is down.
      { provide: API_BASE_URL, useValue: 'http://localhost/down' },
    ]);
    expect(responseInit.status).toBe(503);
    expect({ title, descriptions }).toEqual({
      title: `Unavailable · ${APP_NAME}`,
      descriptions: [],
    });
    expect(harness.routeNativeElement?.querySelector('h1')?.textContent).toBe(
      'This product is unavailable',
    );
  });

  it('has the not-found title for an id that names no product', async () => {
    const { title, descriptions } = await headAt('/products/0');
    expect({ title, descriptions }).toEqual({
      title: `Page not found · ${APP_NAME}`,
      descriptions: ['There is nothing at this address.'],
    });
  });
});
