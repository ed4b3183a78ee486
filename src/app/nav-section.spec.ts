import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { currentSection } from './nav-section';

describe('currentSection', () => {
  it('is the first segment of the matched route path, and none for the not-found route', async () => {
    TestBed.configureTestingModule({
      providers: [
        provideRouter([
          { path: '', children: [] },
          { path: 'products/:id', children: [] },
          { path: 'shop', children: [{ path: 'cart', children: [] }] },
          { path: '**', children: [] },
        ]),
      ],
    });
    const router = TestBed.inject(Router);
    const sections: Record<string, string | null> = {};
    for (const url of [
      '/',
      '/?q=1',
      '/products/42',
      '/shop/cart',
      '/nowhere',
      '/products/42/more',
    ]) {
      await router.navigateByUrl(url);
      sections[url] = currentSection(router.routerState.snapshot.root);
    }
    expect(sections).toEqual({
      '/': '',
      '/?q=1': '',
      '/products/42': 'products',
      '/shop/cart': 'shop',
      '/nowhere': null,
      '/products/42/more': null,
    });
  });
});
