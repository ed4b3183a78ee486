import { I18nPluralPipe, NgLocalization } from '@angular/common';
import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { TitleStrategy, provideRouter, withComponentInputBinding } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import { routes } from '../app.routes';
import { APP_NAME, PageTitleStrategy } from '../page-title';
import Dashboard, { VISIT_COUNTS } from './dashboard';

describe('Dashboard', () => {
  beforeEach(() => localStorage.clear());

  it('counts visits in this browser', async () => {
    const first = TestBed.createComponent(Dashboard);
    await first.whenStable();
    expect((first.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain(
      'opened this dashboard once in',
    );

    const second = TestBed.createComponent(Dashboard);
    await second.whenStable();
    expect((second.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain(
      'opened this dashboard twice in',
    );

    const third = TestBed.createComponent(Dashboard);
    await third.whenStable();
    expect((third.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain(
      'opened this dashboard 3 times in',
    );
  });

  it('words every count of visits right', () => {
    const pipe = new I18nPluralPipe(TestBed.inject(NgLocalization));
    expect([0, 1, 2, 3, 11, 21].map((count) => pipe.transform(count, VISIT_COUNTS))).toEqual([
      '0 times',
      'once',
      'twice',
      '3 times',
      '11 times',
      '21 times',
    ]);
  });

  it('has its own title and description once rendered in the browser', async () => {
    TestBed.configureTestingModule({
      providers: [
        provideRouter(routes, withComponentInputBinding()),
        { provide: TitleStrategy, useClass: PageTitleStrategy },
      ],
    });
    await RouterTestingHarness.create('/dashboard');
    // As its route declares them (app.routes.ts).
    const route = routes.find(({ path }) => path === 'dashboard')!;
    expect(TestBed.inject(Title).getTitle()).toBe(`${route.title as string} · ${APP_NAME}`);
    expect(
      TestBed.inject(Meta)
        .getTags('name="description"')
        .map((tag) => tag.content),
    ).toEqual([route.data!['description'] as string]);
  });
});
