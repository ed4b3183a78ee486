import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';
import { report } from '../errors.ts';
import type { DataCache, DataUse } from '../data-cache/data-cache.ts';
import { newDataUse, withRenderFetches } from '../data-cache/render-fetch.ts';
import { channels, type RenderTiming, traced } from '../channels.ts';
import type { RenderRequest } from '../request/render-request.ts';
import { partToken } from './personal/page-parts.ts';
import { collectConsole, type ConsoleCapture } from './render-console.ts';
import type { RenderLimiter } from './render-limiter.ts';
import type { RouteInfo } from './route-matcher.ts';
import type { EngineOutput, PageEngine, PartEngine, PartInput, PartOutput } from './engine.ts';
import type { UndeclaredReads } from './undeclared-reads.ts';

/** A visitor's parts, rendered. */
export interface RenderedParts extends PartOutput {
  /** Angular's ErrorHandler reported an error: a part may be broken. */
  reportedError: boolean;
  /** What the data they fetched allows; undefined without a data cache. */
  data: DataUse | undefined;
  timing: RenderTiming;
}

/** A finished render. */
export interface Rendered extends EngineOutput {
  /** The token its personal parts' markers carry; undefined for an app without parts. */
  partToken: string | undefined;
  /** Angular's ErrorHandler reported an error: the page may be broken (a component threw). */
  reportedError: boolean;
  /** What the data it fetched allows the page (data-cache/); undefined without a data cache. */
  data: DataUse | undefined;
  /** Its wait for a slot, the render, its data (Server-Timing). */
  timing: RenderTiming;
}

export interface RendererOptions {
  engine: PageEngine;
  limiter: RenderLimiter;
  /** What a shared page's render reads of the request that its route does not declare. */
  reads: UndeclaredReads;
  log: Logger;
  /** What the renders fetch goes through. */
  data?: DataCache;
  /**
   * The render's request carries the render's signal, which Angular's engine stops the render at
   * (a client that left, a render out of time): `npm start`, as Angular's own dev server does. In
   * production the limiter holds a slot to the render's real end, which an abort would not.
   */
  abortable?: boolean;
  /** The app has personal parts: each page render gets a token for their markers. */
  markParts?: boolean;
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
  /** Renders of visitors' parts that got a slot and began (personal/). */
  partsStarted = 0;
  /** What /healthz and the metrics report of renders: begun, running and waiting, undeclared reads. */
  get stats() {
    return {
      started: this.started,
      partsStarted: this.partsStarted,
      ...this.#limiter.stats,
      undeclaredReads: Object.fromEntries(this.#reads.counts),
    };
  }

  readonly #reads: UndeclaredReads;
  readonly #data: DataCache | undefined;
  readonly #abortable: boolean;
  readonly #markParts: boolean;

  constructor({
    engine,
    limiter,
    reads,
    log,
    data,
    abortable = false,
    markParts = false,
  }: RendererOptions) {
    this.#markParts = markParts;
    this.#engine = engine;
    this.#limiter = limiter;
    this.#reads = reads;
    this.#log = log;
    this.#data = data;
    this.#abortable = abortable;
  }

  /** A render for a request, in a slot; `signal` gives up its place in the queue. */
  render(request: RenderRequest, route: RouteInfo, signal: AbortSignal): Promise<Rendered> {
    return this.#run(request, route, signal);
  }

  /** A render nobody waits for (a cache refresh), in a slot no request wants. */
  renderInBackground(request: RenderRequest, route: RouteInfo): Promise<Rendered> {
    return this.#run(request, route, undefined);
  }

  /**
   * The render in its slot: the engine, its fetches through the data cache, what it writes to the
   * console collected, timed.
   */
  #inSlot(
    request: RenderRequest,
    route: RouteInfo,
    signal: AbortSignal | undefined,
    making: Making,
  ): () => Promise<EngineOutput> {
    const { captured, use, timing } = making;
    const data = this.#data;
    return () => {
      const startMs = performance.now();
      this.started++;
      const input = this.#reads.inputFor(request, route, this.#abortable ? signal : undefined);
      if (making.partToken !== undefined) {
        input.context.personalParts = { token: making.partToken };
      }
      const engine = () => this.#engine(input, route, signal);
      const render = () =>
        collectConsole(captured, async () => {
          // What the render fetches goes through the data cache, and tells the page what it allows.
          const output = await (use === undefined
            ? engine()
            : withRenderFetches(data!, use, engine));
          if (input.refused !== undefined) {
            throw input.refused;
          }
          return output;
        });
      return traced(
        channels.render,
        () => ({ route: `/${route.path}`, background: signal === undefined }),
        async (message) => {
          try {
            const output = await render();
            if (message !== undefined) {
              message.status = output.status;
              message.reportedError = captured.errors > 0;
            }
            return output;
          } finally {
            timing.renderMs = performance.now() - startMs;
            if (message !== undefined) {
              message.ms = timing.renderMs;
            }
          }
        },
      );
    };
  }

  /**
   * A visitor's parts of a page (personal/), rendered by the app's `renderPart` in a slot as a page
   * is: their fetches through the data cache, what they write to the console collected. `route` is
   * the page's, which traces and logs name.
   */
  async renderParts(
    engine: PartEngine,
    input: PartInput,
    route: RouteInfo,
    signal: AbortSignal,
  ): Promise<RenderedParts> {
    const captured: ConsoleCapture = { lines: [], errors: 0 };
    const use = this.#data && newDataUse(route.bypassDataCache);
    const timing: RenderTiming = { queueMs: 0, renderMs: 0, dataMs: 0, fetches: '' };
    const data = this.#data;
    const queuedAt = performance.now();
    let task = () => {
      timing.queueMs = performance.now() - queuedAt;
      const startMs = performance.now();
      this.partsStarted++;
      const render = () =>
        collectConsole(captured, () =>
          use === undefined ? engine(input) : withRenderFetches(data!, use, () => engine(input)),
        );
      return traced(
        channels.partRender,
        () => ({ route: `/${route.path}`, parts: input.parts.map(({ name }) => name).join(' ') }),
        async (message) => {
          try {
            return await render();
          } finally {
            timing.renderMs = performance.now() - startMs;
            if (message !== undefined) {
              message.ms = timing.renderMs;
              message.reportedError = captured.errors > 0;
            }
          }
        },
      );
    };
    if (channels.partRender.start.hasSubscribers) {
      task = AsyncLocalStorage.bind(task);
    }
    const output = await this.#limiter.run(task, signal);
    if (captured.lines.length > 0) {
      report(this.#log, 'ORIGIN_RENDER_CONSOLE', { url: input.url, console: captured.lines });
    }
    if (use !== undefined) {
      timing.dataMs = use.waitedMs;
      timing.fetches = fetchSummary(use);
    }
    return { ...output, reportedError: captured.errors > 0, data: use, timing };
  }

  async #run(
    request: RenderRequest,
    route: RouteInfo,
    signal: AbortSignal | undefined,
  ): Promise<Rendered> {
    const { url } = request;
    const making: Making = {
      captured: { lines: [], errors: 0 },
      use: this.#data && newDataUse(route.bypassDataCache),
      timing: { queueMs: 0, renderMs: 0, dataMs: 0, fetches: '' },
      partToken: this.#markParts ? partToken() : undefined,
    };
    const { captured, use, timing } = making;
    const queued = queueSpan(signal === undefined);
    const queuedAt = performance.now();
    const inSlot = this.#inSlot(request, route, signal, making);
    let task = () => {
      timing.queueMs = performance.now() - queuedAt;
      queued?.granted();
      return inSlot();
    };
    if (channels.render.start.hasSubscribers) {
      // A queued render starts when another ends, in that one's async context: its spans belong
      // to the request that asked for it.
      task = AsyncLocalStorage.bind(task);
    }
    let output: EngineOutput;
    try {
      output = await (signal
        ? this.#limiter.run(task, signal)
        : this.#limiter.runInBackground(task));
    } catch (error) {
      queued?.gaveUp(error);
      // A render that failed (500) or was shed (503) carries the console output to its log line;
      // a signal's reason is shared between requests, left as is.
      throw error === signal?.reason
        ? error
        : Object.assign(error as object, { consoleOutput: captured.lines });
    }
    if (captured.lines.length > 0) {
      report(this.#log, 'ORIGIN_RENDER_CONSOLE', { url, console: captured.lines });
    }
    if (use !== undefined) {
      timing.dataMs = use.waitedMs;
      timing.fetches = fetchSummary(use);
    }
    return {
      ...output,
      reportedError: captured.errors > 0,
      data: use,
      timing,
      partToken: making.partToken,
    };
  }
}

/** What a render leaves besides its page: what it wrote to the console, its data, its times. */
interface Making {
  partToken: string | undefined;
  captured: ConsoleCapture;
  use: DataUse | undefined;
  timing: RenderTiming;
}

/**
 * The span of a render's wait for its slot, when a tracer listens: it ends when the slot is
 * granted, or when the request gave up or was shed first.
 */
function queueSpan(
  background: boolean,
): { granted: () => void; gaveUp: (error: unknown) => void } | undefined {
  if (!channels.renderQueue.start.hasSubscribers) {
    return undefined;
  }
  let settle!: { granted: () => void; gaveUp: (error: unknown) => void };
  void channels.renderQueue
    .tracePromise(
      () =>
        new Promise<void>((resolve, reject) => {
          settle = { granted: () => resolve(), gaveUp: reject };
        }),
      { background },
    )
    .catch(() => undefined);
  return settle;
}

/** How the data cache answered a render's fetches, counted: `hit 2, miss 1`. */
function fetchSummary(use: DataUse): string {
  const counts = new Map<string, number>();
  for (const { outcome } of use.fetches) {
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
  return [...counts].map(([outcome, count]) => `${outcome} ${count}`).join(', ');
}
