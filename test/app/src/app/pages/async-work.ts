import { HttpClient } from '@angular/common/http';
import { Component, DestroyRef, inject, signal } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { ActivatedRoute } from '@angular/router';
import { debounceTime, delay, map, of, timer } from 'rxjs';

interface ServerNote {
  message: string;
}

/**
 * Rendered per request, with the kinds of asynchronous work real pages do while rendering: an
 * untracked zero-delay timer, RxJS time operators, an HttpClient call to the origin itself, and
 * timers that fire after the page has been sent. The server's render must wait for the first
 * three and keep their results in the page (test/server/async-work.test.mjs), and the last must
 * neither fail the render nor disturb the server afterwards.
 */
@Component({
  selector: 'app-async-work',
  template: `
    <h1>Async work while rendering</h1>
    <dl>
      <dt>setTimeout(0)</dt>
      <dd data-async="timeout">{{ fromTimeout() }}</dd>
      <dt>RxJS timer(0)</dt>
      <dd data-async="rxjs-timer">{{ fromTimer() }}</dd>
      <dt>RxJS delay(0)</dt>
      <dd data-async="rxjs-delay">{{ fromDelay() }}</dd>
      <dt>RxJS debounceTime(0)</dt>
      <dd data-async="rxjs-debounce">{{ fromDebounce() }}</dd>
      <dt>HttpClient</dt>
      <dd data-async="http">{{ fromHttp() }}</dd>
      <dt>Ticks after the page was sent</dt>
      <dd data-async="late">{{ lateTicks() }}</dd>
    </dl>
  `,
})
export default class AsyncWork {
  protected readonly fromTimeout = signal('pending');
  protected readonly fromTimer = toSignal(timer(0).pipe(map(() => 'done')), {
    initialValue: 'pending',
  });
  protected readonly fromDelay = toSignal(of('done').pipe(delay(0)), { initialValue: 'pending' });
  // debounceTime emits the last value once the source completes or goes quiet: 'done' wins.
  protected readonly fromDebounce = toSignal(of('first', 'done').pipe(delay(0), debounceTime(0)), {
    initialValue: 'pending',
  });
  // `?http=0` leaves the call out: then nothing but the timers keeps the render waiting.
  protected readonly fromHttp = toSignal(
    inject(ActivatedRoute).snapshot.queryParamMap.get('http') === '0'
      ? of('skipped')
      : inject(HttpClient)
          // Relative to the base href: a localized build serves public/ under each locale's prefix.
          .get<ServerNote>('async-work.json')
          .pipe(map((note) => note.message)),
    { initialValue: 'pending' },
  );
  protected readonly lateTicks = signal(0);

  constructor() {
    setTimeout(() => this.fromTimeout.set('done'), 0);
    // Past the end of a server render: these run after the app is destroyed there, as timers a
    // page forgets about do. The interval is cleared with the component, as it should be.
    setTimeout(() => this.lateTicks.update((n) => n + 1), 50);
    const interval = setInterval(() => this.lateTicks.update((n) => n + 1), 20);
    inject(DestroyRef).onDestroy(() => clearInterval(interval));
  }
}
