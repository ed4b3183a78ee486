import { TestBed } from '@angular/core/testing';
import { Meta, Title } from '@angular/platform-browser';
import { Router, TitleStrategy, provideRouter } from '@angular/router';
import { Component } from '@angular/core';
import { PageTitleStrategy } from './page-title';

@Component({ template: '' })
class Blank {}

describe('PageTitleStrategy', () => {
  beforeEach(() => {
    TestBed.configureTestingModule({
      providers: [
        provideRouter([
          { path: 'a', title: 'Page A', data: { description: 'About A' }, component: Blank },
          {
            path: 'b',
            title: 'Page B',
            resolve: { description: () => 'About B' },
            component: Blank,
          },
          { path: 'c', component: Blank },
        ]),
        { provide: TitleStrategy, useClass: PageTitleStrategy },
      ],
    });
  });

  it('sets the title and one description per page, updated in place', async () => {
    const router = TestBed.inject(Router);
    await router.navigateByUrl('/a');
    expect(TestBed.inject(Title).getTitle()).toBe('Page A · SSR Origin');
    await router.navigateByUrl('/b');
    expect(TestBed.inject(Title).getTitle()).toBe('Page B · SSR Origin');
    const tags = TestBed.inject(Meta).getTags('name="description"');
    expect(tags.map((tag) => tag.content)).toEqual(['About B']);
  });

  it("leaves no other page's description on a page without one", async () => {
    const router = TestBed.inject(Router);
    await router.navigateByUrl('/a');
    await router.navigateByUrl('/c');
    expect(TestBed.inject(Title).getTitle()).toBe('SSR Origin');
    expect(TestBed.inject(Meta).getTags('name="description"')).toEqual([]);
  });
});
