import { DOCUMENT, isPlatformServer } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import { Component, inject, PLATFORM_ID, signal } from '@angular/core';
import { ActivatedRoute } from '@angular/router';
import { PersonalPart } from '../personal-part';

/**
 * A shared page with a personal part that prints an API's string (TEST_DATA_API `/items/:id`'s
 * title) where pages print data: in text, in an attribute, in JSON-LD and in a comment. An API (or
 * whoever writes its data) may put ESI markup in it; a surrogate that assembles the page must never
 * act on it (test/deploy/varnish.test.mjs): the origin's template neutralizes it (esi-template.ts).
 */
@Component({
  selector: 'app-parts-data',
  imports: [PersonalPart],
  template: `
    <h1 class="title" [attr.data-title]="title()">{{ title() }}</h1>
    <personal-part name="visitor" [inputs]="{ id: id }">
      <p class="visitor-placeholder">Hello, visitor</p>
    </personal-part>
  `,
})
export default class PartsData {
  protected readonly id = inject(ActivatedRoute).snapshot.paramMap.get('id') ?? '';
  protected readonly title = signal('no title');

  constructor() {
    if (!isPlatformServer(inject(PLATFORM_ID))) {
      return;
    }
    const env =
      (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
    const api = env['TEST_DATA_API'] ?? '';
    if (api === '') {
      return;
    }
    const document = inject(DOCUMENT);
    inject(HttpClient)
      .get<{ title: string }>(`${api}/items/${this.id}`)
      .subscribe({
        next: ({ title }) => {
          this.title.set(title);
          // As a page's structured data and a comment hold data: written by the server alone.
          const jsonLd = document.createElement('script');
          jsonLd.type = 'application/ld+json';
          jsonLd.textContent = JSON.stringify({ '@type': 'Thing', name: title });
          document.head.appendChild(jsonLd);
          document.body.appendChild(document.createComment(` title: ${title} `));
        },
        error: () => this.title.set('data unavailable'),
      });
  }
}
