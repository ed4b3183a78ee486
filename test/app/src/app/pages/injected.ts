import { isPlatformServer } from '@angular/common';
import { Component, CSP_NONCE, ElementRef, inject, PLATFORM_ID, Renderer2 } from '@angular/core';
import { DomSanitizer } from '@angular/platform-browser';

/**
 * A script the app adds itself, with Angular's CSP_NONCE: it must run under CSP=strict. Rendered on
 * the server only; ngSkipHydration, because the browser builds this component afresh.
 */
@Component({
  selector: 'app-trusted-script',
  template: '',
  host: { ngSkipHydration: 'true' },
})
export class TrustedScript {
  constructor() {
    const nonce = inject(CSP_NONCE);
    if (!isPlatformServer(inject(PLATFORM_ID)) || nonce === null) {
      return;
    }
    const renderer = inject(Renderer2);
    const script = renderer.createElement('script') as HTMLScriptElement;
    renderer.setAttribute(script, 'nonce', nonce);
    renderer.appendChild(script, renderer.createText('window.trusted = true;'));
    renderer.appendChild(inject(ElementRef).nativeElement, script);
  }
}

/**
 * What an injection looks like: an attacker's string rendered through a bypassed sanitizer. Under
 * CSP=strict its `<script>` must stay without a nonce, so the browser blocks it and reports it,
 * while the app's own script (TrustedScript) runs (test/server/csp.test.mjs, test/browser/csp.test.mjs).
 */
export const ATTACK = `<p class="attack">attacker markup</p><script>window.injected = true;</script>`;

@Component({
  selector: 'app-injected',
  imports: [TrustedScript],
  template: `<h1>Injected</h1>
    <app-trusted-script />
    <div [innerHTML]="markup"></div>`,
})
export default class Injected {
  protected readonly markup = inject(DomSanitizer).bypassSecurityTrustHtml(ATTACK);
}
