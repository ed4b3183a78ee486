import {
  Component,
  DestroyRef,
  inject,
  input,
  type OnInit,
  PendingTasks,
  signal,
} from '@angular/core';

/**
 * The tests' slow part (app.parts.ts `slow`, timeoutMs 100): it waits `delayMs` (a timer the render
 * waits for) before it shows `.slow-done`, so the origin's tests can see a part that takes longer
 * than its timeout become its placeholder.
 */
@Component({
  selector: 'app-slow-part',
  template: `
    @if (done()) {
      <span class="slow-done">done after {{ delayMs() }} ms</span>
    } @else {
      <span class="slow-pending">waiting</span>
    }
  `,
})
export class SlowPart implements OnInit {
  readonly delayMs = input(0);
  protected readonly done = signal(false);
  readonly #tasks = inject(PendingTasks);
  readonly #destroyRef = inject(DestroyRef);

  ngOnInit(): void {
    const taskDone = this.#tasks.add();
    const timer = setTimeout(() => {
      this.done.set(true);
      taskDone();
    }, this.delayMs());
    this.#destroyRef.onDestroy(() => {
      clearTimeout(timer);
      taskDone();
    });
  }
}
