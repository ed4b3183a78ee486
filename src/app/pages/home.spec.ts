import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { TitleStrategy, provideRouter, withComponentInputBinding } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import { routes } from '../app.routes';
import { APP_NAME, PageTitleStrategy } from '../page-title';
import Home from './home';

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

describe('Home', () => {
  function setup() {
    const fixture = TestBed.createComponent(Home);
    const element = fixture.nativeElement as HTMLElement;
    return { fixture, element };
  }

  it('shows the Material form: First name, Last name, Submit', async () => {
    const { fixture, element } = setup();
    await fixture.whenStable();
    const labels = [...element.querySelectorAll('mat-label')].map((label) =>
      label.textContent?.trim(),
    );
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

  it('has its own title and description, as its route declares them', async () => {
    // Read from the route, so rewording the page changes one place: app.routes.ts.
    const route = routes.find(({ path }) => path === '')!;
    expect(await headAt('/')).toEqual({
      title: `${route.title as string} · ${APP_NAME}`,
      descriptions: [route.data!['description'] as string],
    });
  });
});
