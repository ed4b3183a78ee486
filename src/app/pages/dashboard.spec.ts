import { TestBed } from '@angular/core/testing';
import Dashboard from './dashboard';

describe('Dashboard', () => {
  beforeEach(() => localStorage.clear());

  it('counts visits in this browser', async () => {
    const first = TestBed.createComponent(Dashboard);
    await first.whenStable();
    expect((first.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain('opened this dashboard once in');

    const second = TestBed.createComponent(Dashboard);
    await second.whenStable();
    expect((second.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain('opened this dashboard twice in');

    const third = TestBed.createComponent(Dashboard);
    await third.whenStable();
    expect((third.nativeElement as HTMLElement).querySelector('.visits')?.textContent).toContain('opened this dashboard 3 times in');
  });
});
