import { Component } from '@angular/core';
import { RouterLink } from '@angular/router';

@Component({
  selector: 'app-home',
  imports: [RouterLink],
  template: `
    <h2>My Store</h2>
    <p><a routerLink="/products/1">Our first product</a> · <a routerLink="/about">About us</a></p>
  `,
})
export class Home {}
