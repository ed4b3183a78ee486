import { Component } from '@angular/core';
import { RouterLink } from '@angular/router';

@Component({
  selector: 'app-about',
  imports: [RouterLink],
  template: `
    <h2>About My Store</h2>
    <p>A small shop. <a routerLink="/">Home</a></p>
  `,
})
export class About {}
