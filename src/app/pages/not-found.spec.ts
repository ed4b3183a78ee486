import { RESPONSE_INIT } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { TitleStrategy, provideRouter, withComponentInputBinding } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import { routes } from '../app.routes';
import { APP_NAME, PageTitleStrategy } from '../page-title';
import NotFound from './not-found';

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
    expect((fixture.nativeElement as HTMLElement).querySelector('h1')?.textContent).toBe(
      'Page not found',
    );
  });

  it('says so in its title and description', async () => {
    // As its route declares them (app.routes.ts).
    const route = routes.find(({ path }) => path === '**')!;
    expect(await headAt('/no/such/page')).toEqual({
      title: `${route.title as string} · ${APP_NAME}`,
      descriptions: [route.data!['description'] as string],
    });
  });
});
