import { RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import NotFound from './not-found';

describe('NotFound', () => {
  it('sets the response status to 404 when rendered on the server', () => {
    const responseInit: ResponseInit = { status: 200 };
    TestBed.configureTestingModule({
      providers: [provideRouter([]), { provide: RESPONSE_INIT, useValue: responseInit }],
    });
    TestBed.createComponent(NotFound);
    expect(responseInit.status).toBe(404);
  });

  it('renders in the browser, where there is no response to set', async () => {
    TestBed.configureTestingModule({ providers: [provideRouter([])] });
    const fixture = TestBed.createComponent(NotFound);
    await fixture.whenStable();
    expect((fixture.nativeElement as HTMLElement).querySelector('h1')?.textContent).toBe('Page not found');
  });
});
