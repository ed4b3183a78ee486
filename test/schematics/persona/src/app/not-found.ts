import { Component } from '@angular/core';
import { RouterLink } from '@angular/router';

@Component({
  selector: 'app-not-found',
  imports: [RouterLink],
  template: `<h2>Not found</h2>
    <p><a routerLink="/">Home</a></p>`,
})
export class NotFound {}
