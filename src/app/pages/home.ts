import { Component, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';

/** The reference article's Material form; prerendered at build time (see app.routes.server.ts). */
@Component({
  selector: 'app-home',
  imports: [MatFormFieldModule, MatInputModule, MatButtonModule],
  template: `
    <h1>Welcome</h1>
    <p>This page is prerendered at build time and served from the origin without rendering.</p>
    <form (submit)="submit($event)">
      <mat-form-field>
        <mat-label>First name</mat-label>
        <input
          matInput
          name="firstName"
          [value]="firstName()"
          (input)="firstName.set(valueOf($event))"
        />
      </mat-form-field>
      <mat-form-field>
        <mat-label>Last name</mat-label>
        <input
          matInput
          name="lastName"
          [value]="lastName()"
          (input)="lastName.set(valueOf($event))"
        />
      </mat-form-field>
      <button mat-raised-button type="submit">Submit</button>
    </form>
    @if (greeting(); as text) {
      <p class="greeting" role="status">{{ text }}</p>
    }
  `,
  styles: `
    form {
      display: flex;
      flex-wrap: wrap;
      gap: 16px;
      align-items: baseline;
    }
  `,
})
export default class Home {
  protected readonly firstName = signal('');
  protected readonly lastName = signal('');
  protected readonly greeting = signal('');

  protected valueOf(event: Event): string {
    return (event.target as HTMLInputElement).value;
  }

  protected submit(event: Event): void {
    event.preventDefault();
    const name = `${this.firstName()} ${this.lastName()}`.trim();
    this.greeting.set(name ? `Hello, ${name}!` : 'Please tell us your name.');
  }
}
