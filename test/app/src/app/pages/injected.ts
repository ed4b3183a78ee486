import { Component, inject } from '@angular/core';
import { DomSanitizer } from '@angular/platform-browser';

/**
 * What an injection looks like: an attacker's string rendered through a bypassed sanitizer. Under
 * CSP=strict its `<script>` must stay without a nonce, so the browser blocks it and reports it
 * (test/server/csp.test.mjs, test/browser/csp.test.mjs).
 */
export const ATTACK = `<p class="attack">attacker markup</p><script>window.injected = true;</script>`;

@Component({
  selector: 'app-injected',
  template: `<h1>Injected</h1>
    <div [innerHTML]="markup"></div>`,
})
export default class Injected {
  protected readonly markup = inject(DomSanitizer).bypassSecurityTrustHtml(ATTACK);
}
