// One request and its response as the observers see them (metrics, the access log, Server-Timing,
// traces): the steps that answer it, on the fast path or in Koa, note on it what they did, and the
// observers read it, once as its head goes out and once at its end. Made only when something
// observes; a step's `exchangeOf(res)?.…` is then one property read that finds nothing.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { channels, type RequestMessage } from './channels.ts';

/** How a request was answered: before Koa from memory (fast-path.ts), or by the Koa chain. */
export type Entrance = 'fast-path' | 'koa';

/** How a page of the app was made for this answer. */
export type RenderMode = 'prerendered' | 'server' | 'client';

/** What a render that made this answer's page took, when one did (for this request, or one it joined). */
export interface RenderTiming {
  /** Waiting for a render slot. */
  queueMs: number;
  /** In the slot, the page rendered (its data fetched meanwhile). */
  renderMs: number;
  /** How long the render waited on its APIs, overlapping fetches counted once. */
  dataMs: number;
  /** How the data cache answered each of its fetches, counted: `hit 2, miss 1`. */
  fetches: string;
}

export class Exchange {
  /** performance.now() at the request's arrival. */
  readonly startMs: number;
  entrance: Entrance = 'koa';
  /**
   * How traces and logs name what answered, never the URL: the app's route template
   * (`/products/:id`), `/{file}` for a file of the build, an origin endpoint's own path; undefined
   * until a step says, and left so for a request refused before any route was looked at.
   */
  route: string | undefined;
  /** A page's render mode, for an answer the app's routes made. */
  renderMode: RenderMode | undefined;
  /** How the render cache answered (`hit`, `stale`, `miss`, `coalesced`, `shared`, `bypass`). */
  cache: string | undefined;
  /** The render behind this answer, when one ran for it. */
  render: RenderTiming | undefined;
  /** The locale of the page (a localized build). */
  locale: string | undefined;
  /** The error code (errors.ts) of a failed or refused request. */
  errorCode: string | undefined;
  /** The error behind a 5xx, recorded on the request's span. */
  error: unknown;
  /** The trace and span ids of this request, when traced: what its access log line carries. */
  traceIds: { trace_id: string; span_id: string } | undefined;
  readonly #observers: Observers;

  constructor(observers: Observers, startMs: number) {
    this.#observers = observers;
    this.startMs = startMs;
  }

  /** Headers the observers add to the answer as its head goes out (Server-Timing). */
  headers(): readonly string[] {
    return this.#observers.headersOf(this);
  }
}

/** Something told of every request: what it adds to the answer's head, and what happens at its end. */
export interface RequestObserver {
  /** Headers for the answer, as name, value pairs, asked for as the head goes out. */
  headers?(exchange: Exchange): readonly string[];
  /**
   * The response ended: `finished` when its last byte went to the socket, false when the client
   * left (or reset its stream) first.
   */
  ended?(exchange: Exchange, req: IncomingMessage, res: ServerResponse, finished: boolean): void;
}

const EXCHANGE = Symbol('origin.exchange');
type Observed = ServerResponse & { [EXCHANGE]?: Exchange };

/** The exchange of a response, when something observes requests. */
export function exchangeOf(res: ServerResponse): Exchange | undefined {
  return (res as Observed)[EXCHANGE];
}

const NO_HEADERS: readonly string[] = [];

/** The observers of a process, and the request listener that tells them of each request. */
export class Observers {
  readonly #withHeaders: RequestObserver[];
  readonly #atEnd: RequestObserver[];
  /** Names a request no step named, once it ended: a file, a prerendered page, a redirect. */
  readonly #nameOf: (exchange: Exchange, req: IncomingMessage, res: ServerResponse) => void;

  constructor(
    observers: readonly RequestObserver[],
    nameOf: (exchange: Exchange, req: IncomingMessage, res: ServerResponse) => void,
  ) {
    this.#withHeaders = observers.filter((observer) => observer.headers !== undefined);
    this.#atEnd = observers.filter((observer) => observer.ended !== undefined);
    this.#nameOf = nameOf;
  }

  /** Whether any observer adds headers to answers. */
  get addsHeaders(): boolean {
    return this.#withHeaders.length > 0;
  }

  headersOf(exchange: Exchange): readonly string[] {
    if (this.#withHeaders.length === 0) {
      return NO_HEADERS;
    }
    return this.#withHeaders.flatMap((observer) => observer.headers!(exchange));
  }

  /**
   * `handle` with each request observed: an exchange on its response, the observers told at its
   * end, and with a tracer listening, the request published on its channel (the tracer's context
   * active for all the request's work). With no observer and no tracer, `handle` itself.
   */
  listener(handle: RequestListener): RequestListener {
    const observed = this.#atEnd.length > 0 || this.#withHeaders.length > 0;
    const request = channels.request;
    return (req, res) => {
      const traced = request.start.hasSubscribers;
      if (!observed && !traced) {
        handle(req, res);
        return;
      }
      const exchange = new Exchange(this, performance.now());
      (res as Observed)[EXCHANGE] = exchange;
      if (!traced) {
        res.once('close', () => this.#ended(exchange, req, res));
        handle(req, res);
        return;
      }
      // As tracePromise publishes, without its promise: start (the tracer's context entered for
      // all the request's work) and end around the handler, asyncStart and asyncEnd once the
      // response ended.
      const message: RequestMessage = { req, res, exchange };
      request.start.runStores(message, () => {
        res.once('close', () => {
          this.#ended(exchange, req, res);
          request.asyncStart.publish(message);
          request.asyncEnd.publish(message);
        });
        handle(req, res);
      });
      request.end.publish(message);
    };
  }

  #ended(exchange: Exchange, req: IncomingMessage, res: ServerResponse): void {
    if (exchange.route === undefined) {
      this.#nameOf(exchange, req, res);
    }
    const finished = res.writableFinished;
    for (const observer of this.#atEnd) {
      observer.ended!(exchange, req, res, finished);
    }
  }
}
