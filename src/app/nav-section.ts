import { Directive, ElementRef, OnChanges, Renderer2, inject, input } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { ActivatedRouteSnapshot, NavigationEnd, Router } from '@angular/router';
import { filter } from 'rxjs';

/**
 * The nav section of the page the router shows: the first segment of the matched route's path
 * (`products/:id` → `products`, `''` → `''`). The not-found route (`**`) is in no section, so
 * `/products/0`, which no product matches, marks nothing.
 */
export function currentSection(root: ActivatedRouteSnapshot): string | null {
  let route = root;
  while (route.firstChild) route = route.firstChild;
  const path = route.pathFromRoot
    .map((step) => step.routeConfig?.path ?? '')
    .filter((step) => step !== '')
    .join('/');
  return path.split('/').includes('**') ? null : path.split('/')[0];
}

/**
 * `routerLinkActive` by section: sets `aria-current="page"` on its link while the router shows a
 * page of that section (style the link by that attribute). `routerLinkActive` compares URLs, so a
 * Products link that goes to `/products/1` could not be marked on `/products/42`.
 *
 * Like `routerLinkActive`, it changes the element only once the router has navigated: the server
 * marks the link in its HTML, and hydration keeps that mark instead of flashing the home link
 * while the browser's first navigation is still under way (template bindings would). No class:
 * hydrating a Material button rewrites its class attribute, which would drop one for that while.
 */
@Directive({ selector: '[appNavSection]' })
export class NavSection implements OnChanges {
  /** The section this link stands for: `''` for home, `'products'`, `'dashboard'`. */
  readonly section = input.required<string>({ alias: 'appNavSection' });

  private readonly router = inject(Router);
  private readonly element = inject<ElementRef<HTMLElement>>(ElementRef).nativeElement;
  private readonly renderer = inject(Renderer2);

  constructor() {
    this.router.events
      .pipe(
        filter((event) => event instanceof NavigationEnd),
        takeUntilDestroyed(),
      )
      .subscribe(() => this.update());
  }

  ngOnChanges(): void {
    this.update();
  }

  private update(): void {
    if (!this.router.navigated) return;
    if (currentSection(this.router.routerState.snapshot.root) === this.section()) {
      this.renderer.setAttribute(this.element, 'aria-current', 'page');
    } else {
      this.renderer.removeAttribute(this.element, 'aria-current');
    }
  }
}
