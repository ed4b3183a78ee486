import { Component } from '@angular/core';

/** Prerendered at build time (app.routes.server.ts): the origin serves it without rendering. */
@Component({
  selector: 'app-home',
  template: `
    <h1>SSR Origin</h1>
    <p>Your app starts here: <code>src/app/pages/home.ts</code>.</p>
  `,
})
export default class Home {}
