import { isPlatformServer } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import {
  Component,
  inject,
  Injector,
  input,
  PendingTasks,
  PLATFORM_ID,
  runInInjectionContext,
  signal,
} from '@angular/core';
import { API_BASE_URL } from './api-url';
import { addCacheGroups } from './cache-groups';
import { cookieHeader, cookieValue } from './render-inputs';
import { type Cart, isSessionId, type Me, visitorGroup } from './visitor';

/**
 * The product page's personal part (app.parts.ts `greeting`): the signed-in visitor's name and cart
 * count, from the API with the visitor's session, and a button that adds the product to the cart.
 * It costs a new visitor what it asks and what it builds: one request (`/api/me` answers both the
 * name and the count) and plain elements, its button styled by the page (styles.scss): a part is
 * an application of its own per render, where a second request would add about 2 ms of the
 * origin's CPU and a Material component about 1 ms (docs/personal-parts.md, "What it costs").
 * On the origin it is rendered for each visitor apart from the shared page and spliced into their
 * copy of it; in the browser it is created again, its first request answered from the state its
 * render sent along, and the button works. A visitor without a session sees a sign-in link.
 * Created after a client navigation, it asks the API: until the answer arrives, a visitor with a
 * session is welcomed without a name, never shown the sign-in link for the time of a request.
 * It uses no router (a part render has none): the link is a plain one.
 */
@Component({
  selector: 'app-visitor-greeting',
  template: `
    @let visitor = me();
    @if (visitor) {
      <p class="greeting">Welcome back, {{ visitor.name }}</p>
      <p class="cart">
        Cart: <span class="cart-count">{{ count() ?? '…' }}</span>
        <button type="button" class="add-to-cart" [disabled]="adding()" (click)="add()">
          Add to cart
        </button>
      </p>
    } @else if (visitor === undefined) {
      <p class="greeting">Welcome back</p>
      <p class="cart"></p>
    } @else {
      <p class="greeting"><a href="/account">Sign in</a> to keep a cart.</p>
      <p class="cart"></p>
    }
  `,
})
export class VisitorGreeting {
  /** The product the button adds. */
  readonly product = input.required<number>();
  /** Who the visitor is: undefined while the API is asked, null without a session or when it fails. */
  protected readonly me = signal<Me | null | undefined>(null);
  protected readonly count = signal<number | undefined>(undefined);
  protected readonly adding = signal(false);
  readonly #http = inject(HttpClient);
  readonly #base = inject(API_BASE_URL);

  constructor() {
    const sid = cookieValue(cookieHeader(), 'sid');
    if (!isSessionId(sid)) {
      return;
    }
    this.me.set(undefined);
    const server = isPlatformServer(inject(PLATFORM_ID));
    // On the server the visitor's cookie goes with the request (the origin kept only `sid`); the
    // browser sends its own, and a request without a Cookie header is one its transfer cache answers.
    const headers: Record<string, string> = server ? { cookie: cookieHeader() } : {};
    this.#http.get<Me>(`${this.#base}/me`, { headers }).subscribe({
      next: (me) => {
        this.me.set(me);
        this.count.set(me.cart.count);
      },
      error: () => this.me.set(null),
    });
    if (server) {
      // The visitor's group (a hash of the sid): the API revalidates it when the cart changes.
      const injector = inject(Injector);
      inject(PendingTasks).run(async () => {
        const group = await visitorGroup(sid);
        runInInjectionContext(injector, () => addCacheGroups(group));
      });
    }
  }

  protected add(): void {
    this.adding.set(true);
    this.#http.post<Cart>(`${this.#base}/cart`, { product: this.product() }).subscribe({
      next: (cart) => {
        this.count.set(cart.count);
        this.adding.set(false);
      },
      error: () => this.adding.set(false),
    });
  }
}
