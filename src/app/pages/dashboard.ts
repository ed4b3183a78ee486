import { I18nPluralPipe } from '@angular/common';
import { Component, signal } from '@angular/core';
import { MatCardModule } from '@angular/material/card';

const VISITS_KEY = 'ssr-origin.dashboard.visits';

/** "once", "twice", "3 times": words for the number of visits, for every count (`i18nPlural`). */
export const VISIT_COUNTS: Record<string, string> = {
  '=1': 'once',
  '=2': 'twice',
  other: '# times',
};

/** Rendered only in the browser (RenderMode.Client): it reads browser-only state. */
@Component({
  selector: 'app-dashboard',
  imports: [MatCardModule, I18nPluralPipe],
  template: `
    <h1>Dashboard</h1>
    <mat-card appearance="outlined">
      <mat-card-content>
        <p class="rendered-by">Rendered in the browser.</p>
        <p class="visits">
          You opened this dashboard {{ visits() | i18nPlural: visitCounts }} in this browser.
        </p>
        <p>Viewport: {{ viewport() }}</p>
      </mat-card-content>
    </mat-card>
  `,
})
export default class Dashboard {
  protected readonly visits = signal(countVisit());
  protected readonly visitCounts = VISIT_COUNTS;
  protected readonly viewport = signal(`${window.innerWidth} × ${window.innerHeight}`);
}

function countVisit(): number {
  const visits = Number(localStorage.getItem(VISITS_KEY) ?? '0') + 1;
  localStorage.setItem(VISITS_KEY, String(visits));
  return visits;
}
