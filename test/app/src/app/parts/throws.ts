import { Component, input, type OnInit } from '@angular/core';

/**
 * The tests' failing part (app.parts.ts `throws`): with `fail` true it throws as its first change
 * detection runs (its inputs are not bound yet in its constructor), as a bug in a part does: the
 * whole renderPart call rejects and the origin sends every placeholder.
 */
@Component({
  selector: 'app-throws-part',
  template: `<span class="throws-fine">this part did not throw</span>`,
})
export class ThrowsPart implements OnInit {
  readonly fail = input(false);

  ngOnInit(): void {
    if (this.fail()) {
      throw new Error('fixture: this part throws while rendering');
    }
  }
}
