import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { makeProduct } from '../products';
import Product from './product';

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
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) => a.getAttribute('href'));
    expect(hrefs).toEqual(['/products/6', '/products/8']);
  });

  it('has no previous link on the first product', async () => {
    const element = await render('1');
    const hrefs = [...element.querySelectorAll('mat-card-actions a')].map((a) => a.getAttribute('href'));
    expect(hrefs).toEqual(['/products/2']);
  });
});
