import { Component, inject } from '@angular/core';
import { ActivatedRoute } from '@angular/router';
import { PersonalPart } from '../personal-part';

/**
 * A shared page (s-maxage=60) with personal parts (app.parts.ts), for the origin's tests: the rest
 * of the page (its id) is the shared page's, each part's placeholder what every visitor shares.
 * `?parts=visitor,slow,throws` picks the parts shown, in that order (default: visitor);
 * `delayMs=500` is the slow part's wait and `fail=1` makes the throws part throw.
 */
@Component({
  selector: 'app-parts',
  imports: [PersonalPart],
  template: `
    <h1>
      Parts of <span class="page-id">{{ id }}</span>
    </h1>
    <p class="shared">The shared content of page {{ id }}.</p>
    @if (shows('visitor')) {
      <personal-part name="visitor" [inputs]="{ id: id }">
        <p class="visitor-placeholder">Hello, visitor</p>
      </personal-part>
    }
    @if (shows('slow')) {
      <personal-part name="slow" [inputs]="{ delayMs: delayMs }">
        <span class="slow-placeholder">slow part</span>
      </personal-part>
    }
    @if (shows('throws')) {
      <personal-part name="throws" [inputs]="{ fail: fail }">
        <span class="throws-placeholder">throws part</span>
      </personal-part>
    }
  `,
})
export default class Parts {
  readonly #route = inject(ActivatedRoute).snapshot;
  protected readonly id = this.#route.paramMap.get('id') ?? '';
  readonly #parts = (this.#route.queryParamMap.get('parts') ?? 'visitor').split(',');
  protected readonly delayMs = Math.max(0, Number(this.#route.queryParamMap.get('delayMs')) || 0);
  protected readonly fail = this.#route.queryParamMap.get('fail') === '1';

  protected shows(part: string): boolean {
    return this.#parts.includes(part);
  }
}
