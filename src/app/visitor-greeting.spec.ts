import { PLATFORM_ID, REQUEST, RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideApiInProcess } from './api-in-process';
import { VisitorGreeting } from './visitor-greeting';
import { visitorGroup } from './visitor';

/** The greeting for product 7, once its requests to the demo's API (in this process) are answered. */
async function greet(providers: unknown[] = []) {
  TestBed.configureTestingModule({ providers: [provideApiInProcess(), ...providers] });
  const fixture = TestBed.createComponent(VisitorGreeting);
  fixture.componentRef.setInput('product', 7);
  await fixture.whenStable();
  return { fixture, element: fixture.nativeElement as HTMLElement };
}

describe('VisitorGreeting', () => {
  afterEach(() => (document.cookie = 'sid=; max-age=0'));

  it('shows a visitor without a session the sign-in link', async () => {
    const { element } = await greet();
    expect(element.querySelector('.greeting')?.textContent).toBe('Sign in to keep a cart.');
    expect(element.querySelector('.greeting a')?.getAttribute('href')).toBe('/account');
    expect(element.querySelector('button')).toBeNull();
  });

  it('greets a signed-in visitor with their cart, and adds the product to it', async () => {
    document.cookie = 'sid=abcd1234';
    const { fixture, element } = await greet();
    expect(element.querySelector('.greeting')?.textContent).toBe('Welcome back, Visitor abcd');
    expect(element.querySelector('.cart-count')?.textContent).toBe('0');
    element.querySelector<HTMLButtonElement>('button.add-to-cart')!.click();
    await fixture.whenStable();
    expect(element.querySelector('.cart-count')?.textContent).toBe('1');
  });

  it('welcomes a signed-in visitor while their name loads, never with the sign-in link', async () => {
    document.cookie = 'sid=abcd1234';
    TestBed.configureTestingModule({ providers: [provideApiInProcess()] });
    const fixture = TestBed.createComponent(VisitorGreeting);
    fixture.componentRef.setInput('product', 7);
    // Created after a client navigation: the API has not answered yet.
    fixture.detectChanges();
    const element = fixture.nativeElement as HTMLElement;
    expect(element.querySelector('.greeting')?.textContent).toBe('Welcome back');
    expect(element.querySelector('.greeting a')).toBeNull();
    await fixture.whenStable();
    expect(element.querySelector('.greeting')?.textContent).toBe('Welcome back, Visitor abcd');
  });

  it("declares the visitor's cache group on the server, a hash of the sid, and asks with the visitor's cookie", async () => {
    const responseInit: ResponseInit = {};
    const { element } = await greet([
      { provide: PLATFORM_ID, useValue: 'server' },
      {
        provide: REQUEST,
        useValue: new Request('http://localhost/products/7', {
          headers: { cookie: 'sid=c0ffee42' },
        }),
      },
      { provide: RESPONSE_INIT, useValue: responseInit },
    ]);
    expect(element.querySelector('.greeting')?.textContent).toBe('Welcome back, Visitor c0ff');
    expect(responseInit.headers).toEqual({ 'Cache-Groups': `"${await visitorGroup('c0ffee42')}"` });
  });
});
