import { TestBed } from '@angular/core/testing';
import Home from './home';

describe('Home', () => {
  function setup() {
    const fixture = TestBed.createComponent(Home);
    const element = fixture.nativeElement as HTMLElement;
    return { fixture, element };
  }

  it('shows the Material form: First name, Last name, Submit', async () => {
    const { fixture, element } = setup();
    await fixture.whenStable();
    const labels = [...element.querySelectorAll('mat-label')].map((label) => label.textContent?.trim());
    expect(labels).toEqual(['First name', 'Last name']);
    expect(element.querySelector('button[type=submit]')?.textContent?.trim()).toBe('Submit');
  });

  it('greets the person who submits the form', async () => {
    const { fixture, element } = setup();
    await fixture.whenStable();
    const [first, last] = [...element.querySelectorAll('input')];
    first.value = 'Ada';
    first.dispatchEvent(new Event('input'));
    last.value = 'Lovelace';
    last.dispatchEvent(new Event('input'));
    element.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
    await fixture.whenStable();
    expect(element.querySelector('.greeting')?.textContent).toBe('Hello, Ada Lovelace!');
  });

  it('asks for a name when the form is empty', async () => {
    const { fixture, element } = setup();
    element.querySelector('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
    await fixture.whenStable();
    expect(element.querySelector('.greeting')?.textContent).toBe('Please tell us your name.');
  });
});
