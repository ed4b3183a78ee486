import { Injectable, inject } from '@angular/core';
import { Meta, Title } from '@angular/platform-browser';
import { RouterStateSnapshot, TitleStrategy } from '@angular/router';

export const APP_NAME = 'SSR Origin';

/**
 * Each page's `<title>` and meta description, from its route (`title`, `data.description` or a
 * resolved `description`; a route without one gets no description tag). Set while rendering, so
 * the server's HTML has them: what search engines and link previews read. Updated in place on
 * client navigation, never appended.
 */
@Injectable({ providedIn: 'root' })
export class PageTitleStrategy extends TitleStrategy {
  private readonly title = inject(Title);
  private readonly meta = inject(Meta);

  override updateTitle(snapshot: RouterStateSnapshot): void {
    const title = this.buildTitle(snapshot);
    this.title.setTitle(title ? `${title} · ${APP_NAME}` : APP_NAME);
    let route = snapshot.root;
    while (route.firstChild) route = route.firstChild;
    const description: unknown = route.data['description'];
    if (typeof description === 'string') {
      this.meta.updateTag({ name: 'description', content: description });
    } else {
      // None rather than the previous page's, which client navigation would otherwise leave.
      this.meta.removeTag('name="description"');
    }
  }
}
