import { PLATFORM_ID, REQUEST } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import Account from './account';

describe('Account', () => {
  afterEach(() => {
    document.cookie = 'sid=; path=/; max-age=0';
  });

  async function render(providers: unknown[] = []) {
    TestBed.configureTestingModule({ providers: providers as never[] });
    const fixture = TestBed.createComponent(Account);
    await fixture.whenStable();
    return fixture;
  }

  it("shows the session of the request's cookie, as the server renders it", async () => {
    const request = new Request('http://localhost/account', {
      headers: { cookie: 'a=1; sid=abc123' },
    });
    const fixture = await render([
      { provide: PLATFORM_ID, useValue: 'server' },
      { provide: REQUEST, useValue: request },
    ]);
    expect((fixture.nativeElement as HTMLElement).querySelector('.session')?.textContent).toContain(
      'abc123',
    );
  });

  it('signs in and out with the sid cookie', async () => {
    const fixture = await render();
    const element = fixture.nativeElement as HTMLElement;
    expect(element.querySelector('.session')?.textContent).toContain('Not signed in');
    element.querySelector('button')?.click();
    await fixture.whenStable();
    expect(document.cookie).toMatch(/sid=\w{8}/);
    expect(element.querySelector('.session')?.textContent).toContain('Signed in');
    element.querySelector('button')?.click();
    await fixture.whenStable();
    expect(document.cookie).not.toMatch(/sid=/);
  });
});
