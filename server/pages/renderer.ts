import type { Logger } from 'pino';
import type { RenderRequest } from '../request/render-request.ts';
import { collectConsole, type ConsoleCapture } from './render-console.ts';
import type { RenderLimiter } from './render-limiter.ts';
import type { RouteInfo } from './route-matcher.ts';

/** What an engine made of a URL: the page and what the app set through RESPONSE_INIT. */
export interface EngineOutput {
  /**
   * The page: CommonEngine's string, or the bytes of AngularNodeAppEngine's Response as they are
   * (never decoded only to be encoded again: bench/README.md#the-figures-behind-the-codes-comments).
   */
  html: string | Buffer;
  status: number;
  headers: Headers;
}

/**
 * An engine: renders the page of a request (its URL, the validated origin plus the request
 * target, and the headers the render may see: request/render-request.ts) for a route, and nothing
 * else. Bounds, timeouts, caching and the answer are the origin's.
 */
export type PageEngine = (
  request: RenderRequest,
  route: RouteInfo,
  signal: AbortSignal | undefined,
) => Promise<EngineOutput>;

/** A finished render. */
export interface Rendered extends EngineOutput {
  /** Angular's ErrorHandler reported an error: the page may be broken (a component threw). */
  reportedError: boolean;
}

/**
 * Runs an engine's renders in the limiter's slots, with what the app writes to the console while
 * rendering collected for the request's log line instead of lines of its own.
 */
export class Renderer {
  readonly #engine: PageEngine;
  readonly #limiter: RenderLimiter;
  readonly #log: Logger;
  /** Renders that got a slot and began, in this process: what a shared cache saves is counted here. */
  started = 0;
  /** Told each render's seconds in its slot when metrics are on (metrics/timings.ts). */
  renderEnded: ((seconds: number) => void) | undefined;

  constructor(engine: PageEngine, limiter: RenderLimiter, log: Logger) {
    this.#engine = engine;
    this.#limiter = limiter;
    this.#log = log;
  }

  /** A render for a request, in a slot; `signal` gives up its place in the queue. */
  render(request: RenderRequest, route: RouteInfo, signal: AbortSignal): Promise<Rendered> {
    return this.#run(request, route, signal);
  }

  /** A render nobody waits for (a cache refresh), in a slot no request wants. */
  renderInBackground(request: RenderRequest, route: RouteInfo): Promise<Rendered> {
    return this.#run(request, route, undefined);
  }

  async #run(
    request: RenderRequest,
    route: RouteInfo,
    signal: AbortSignal | undefined,
  ): Promise<Rendered> {
    const { url } = request;
    const captured: ConsoleCapture = { lines: [], errors: 0 };
    const task = () => {
      this.started++;
      const render = () => collectConsole(captured, () => this.#engine(request, route, signal));
      const ended = this.renderEnded;
      if (ended === undefined) {
        return render();
      }
      const startMs = performance.now();
      return render().finally(() => ended((performance.now() - startMs) / 1000));
    };
    let output: EngineOutput;
    try {
      output = await (signal
        ? this.#limiter.run(task, signal)
        : this.#limiter.runInBackground(task));
    } catch (error) {
      // A render that failed (500) or was shed (503) carries the console output to its log line;
      // a signal's reason is shared between requests, left as is.
      throw error === signal?.reason
        ? error
        : Object.assign(error as object, { consoleOutput: captured.lines });
    }
    if (captured.lines.length > 0) {
      this.#log.warn(
        { url, console: captured.lines },
        'the app wrote to the console while rendering',
      );
    }
    return { ...output, reportedError: captured.errors > 0 };
  }
}
