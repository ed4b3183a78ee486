import { Component } from '@angular/core';

/**
 * A page whose render always fails, as a bug in a page does: the origin must answer 500 with its
 * own static page, log the error once, and keep rendering every other page
 * (test/server/faults.test.mjs).
 */
@Component({
  selector: 'app-throws',
  template: `<h1>Never rendered</h1>`,
})
export default class Throws {
  constructor() {
    throw new Error('fixture: this page throws while rendering');
  }
}
