import { RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { TitleStrategy, provideRouter, withComponentInputBinding } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import { routes } from '../app.routes';
import { APP_NAME, PageTitleStrategy } from '../page-title';
import { makeProduct } from '../products';
import Product from './product';

/** The document's title and description tags once the app's own routes have shown `url`. */
async function headAt(url: string) {
  TestBed.configureTestingModule({
    providers: [
      provideRouter(routes, withComponentInputBinding()),
      { provide: TitleStrategy, useClass: PageTitleStrategy },
    ],
  });
  await RouterTestingHarness.create(url);
  const descriptions = TestBed.inject(Meta)
    .getTags('name="description"')
    .map((tag) => tag.content);
  return { title: TestBed.inject(Title).getTitle(), descriptions };
}

describe('Product', () => {
  async function render(id: string) {
    TestBed.configureTestingModule({ providers: [provideRouter([])] });
    const fixture = TestBed.createComponent(Product);
    fixture.componentRef.setInput('id', id);
    await fixture.whenStable();
    return fixture.nativeElement as HTMLElement;
  }

  it('renders the product computed from the id', async () => {
    const element = await render('7');
    const expected = makeProduct(7);
    expect(element.querySelector('h1')?.textContent).toBe(expected.name);
    expect(element.querySelector('.description')?.textContent).toBe(expected.description);
    expect(element.textContent).toContain(expected.price);
  });

  it('links to the previous and next products', async () => {
    const element = await render('7');
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) =>
      a.getAttribute('href'),
    );
    expect(hrefs).toEqual(['/products/6', '/products/8']);
  });

  it('has no previous link on the first product', async () => {
    const element = await render('1');
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) =>
      a.getAttribute('href'),
    );
    expect(hrefs).toEqual(['/products/2']);
  });

  it("has the product's own title and description", async () => {
    const product = makeProduct(7);
    expect(await headAt('/products/7')).toEqual({
      title: `${product.name} · ${APP_NAME}`,
      descriptions: [product.description],
    });
  });

  it('declares its cache groups on the server: the product and the catalog', async () => {
    const responseInit: ResponseInit = { status: 200 };
    TestBed.configureTestingModule({
      providers: [
        provideRouter(routes, withComponentInputBinding()),
        { provide: RESPONSE_INIT, useValue: responseInit },
      ],
    });
    await RouterTestingHarness.create('/products/7');
    expect(responseInit.headers).toEqual({ 'Cache-Groups': '"product-7", "catalog"' });
  });

  it('has the not-found title for an id that names no product', async () => {
    expect(await headAt('/products/0')).toEqual({
      title: `Page not found · ${APP_NAME}`,
      descriptions: ['There is nothing at this address.'],
    });
  });
});
