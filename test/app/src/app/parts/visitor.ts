import { isPlatformServer } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import {
  Component,
  inject,
  input,
  makeStateKey,
  PLATFORM_ID,
  signal,
  TransferState,
} from '@angular/core';
import { addCacheGroups } from '../cache-groups';
import { cookieHeader, cookieValue } from '../render-inputs';

/** Where the server's render asked for the visitor's name, for the browser to ask the same URL. */
const VISITOR_API = makeStateKey<string>('test-visitor-api');

/**
 * The tests' personal part (app.parts.ts `visitor`): it shows the raw `sid` cookie it was rendered
 * for (the canary the origin's tests look for in answers that must not hold it), the page's id it
 * was given as an input and, with TEST_DATA_API, the visitor's name from `${api}/me` asked with the
 * visitor's cookie. Its cache group names the sid, so revalidating it reaches this visitor's part.
 */
@Component({
  selector: 'app-visitor-part',
  template: `
    <p class="visitor">
      Visitor <span class="visitor-sid">{{ sid }}</span> on
      <span class="visitor-input">{{ id() }}</span>
      @if (name(); as n) {
        · <span class="visitor-name">{{ n }}</span>
      }
    </p>
  `,
})
export class VisitorPart {
  readonly id = input('');
  protected readonly sid = cookieValue(cookieHeader(), 'sid') ?? '';
  protected readonly name = signal<string | undefined>(undefined);

  constructor() {
    if (this.sid !== '') {
      addCacheGroups(`visitor-${this.sid}`);
    }
    const server = isPlatformServer(inject(PLATFORM_ID));
    const state = inject(TransferState);
    let api: string;
    if (server) {
      // As pages/data.ts reads it: TEST_DATA_API, or `own` for the app's own API at API_URL.
      const env =
        (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ??
        {};
      const given = env['TEST_DATA_API'] ?? '';
      api = given === 'own' ? (env['API_URL'] ?? '') : given;
      if (api !== '') {
        state.set(VISITOR_API, api);
      }
    } else {
      api = state.get(VISITOR_API, '');
    }
    if (api === '' || this.sid === '') {
      return;
    }
    // The visitor's cookie goes with the request on the server only; the browser sends its own.
    const headers: Record<string, string> = server ? { cookie: cookieHeader() } : {};
    inject(HttpClient)
      .get<{ name: string }>(`${api}/me`, { headers })
      .subscribe({
        next: (me) => this.name.set(me.name),
        error: () => this.name.set('data unavailable'),
      });
  }
}
