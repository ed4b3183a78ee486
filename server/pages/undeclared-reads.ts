// What a shared page's render reads of the request that its route does not declare. Such a render
// sees its URL and declared inputs alone (request/render-request.ts), so a read of anything else
// finds nothing: a page that greets a signed-in visitor by the `sid` cookie greets nobody once its
// route is shared, and nothing would say so. Every such read is said once per route and input in
// this process, at warn in every mode, and counted; RENDER_INPUTS_STRICT makes it fail the render.
import type { Logger } from 'pino';
import { noted, OriginError } from '../errors.ts';
import { firstCookies } from '../request/render-inputs.ts';
import type { RenderRequest } from '../request/render-request.ts';
import type { EngineInput } from './renderer.ts';
import type { RouteInfo } from './route-matcher.ts';

/**
 * Angular's REQUEST_CONTEXT of a render: the request inputs the app's requestCookie() asks the
 * origin for by name (src/app/render-inputs.ts), so that a read of an undeclared one is said with
 * its name, where a read of the raw `cookie` header can only say what was withheld.
 */
export interface RenderContext {
  renderInputs: {
    /** The cookie's value as this render may see it; undefined when it has none (or may not). */
    cookie(name: string): string | undefined;
  };
}

export interface UndeclaredReadsOptions {
  log: Pick<Logger, 'warn' | 'error'>;
  /** RENDER_INPUTS_STRICT: a read throws in the render (which then fails) instead of a warning. */
  strict: boolean;
}

/**
 * Read by Angular's engine itself, whatever the page (@angular/ssr 22.2: its proxy headers,
 * Accept-Language for a localized build's redirect, If-None-Match for its prerendered files), or
 * what every render has (Host: the URL's): never the page's own input.
 */
const ENGINE_READS = /^(?:host|forwarded|x-forwarded-.*|accept-language|if-none-match)$/;

/** At most this many routes × inputs are counted apart; the rest count as `other`. */
const MAX_SERIES = 256;

export class UndeclaredReads {
  readonly #log: UndeclaredReadsOptions['log'];
  readonly #strict: boolean;
  /** Reads counted by route and input (`/products/:id cookie sid`), for /healthz and the metrics. */
  readonly counts = new Map<string, number>();

  constructor({ log, strict }: UndeclaredReadsOptions) {
    this.#log = log;
    this.#strict = strict;
  }

  /**
   * Angular's REQUEST and REQUEST_CONTEXT for a render (`signal`: Angular's engine stops a render
   * when it aborts, which only `npm start` wants). A shared page's headers and context report every
   * read of an input its route does not declare, unless the route opts out
   * (`renderInputs({ undeclaredReads: 'ignore' })`).
   */
  inputFor(render: RenderRequest, route: RouteInfo, signal?: AbortSignal): EngineInput {
    const request = new Request(render.url, { headers: render.headers, signal });
    let armed = false;
    const input: EngineInput = {
      url: render.url,
      request,
      context: undefined!,
      appReads: () => (armed = true),
    };
    const cookies = firstCookies(request.headers.get('cookie') ?? undefined);
    const watched =
      render.sees === 'declared' && route.page.inputs?.undeclaredReads !== 'ignore'
        ? this.#watcher(render, route, input, () => armed)
        : undefined;
    if (watched !== undefined) {
      Object.defineProperty(request, 'headers', {
        value: new WatchedHeaders(request.headers, watched),
      });
    }
    const declaredCookies = new Set(
      (route.page.inputs?.inputs ?? [])
        .filter((input) => input.kind === 'cookie')
        .map((input) => input.name),
    );
    input.context = {
      renderInputs: {
        cookie: (name) => {
          if (watched !== undefined && !declaredCookies.has(name)) {
            watched({ kind: 'cookie', name });
            return undefined;
          }
          return cookies.get(name);
        },
      },
    };
    return input;
  }

  /** What a shared render's reads are checked against, and who is told. */
  #watcher(
    render: RenderRequest,
    route: RouteInfo,
    input: EngineInput,
    armed: () => boolean,
  ): (read: Read) => void {
    const inputs = route.page.inputs?.inputs ?? [];
    const headers = new Set(inputs.filter((i) => i.kind === 'header').map((i) => i.name));
    const declaresCookies = inputs.some((i) => i.kind === 'cookie');
    const withheld = render.withheld?.();
    return (read) => {
      if (!armed()) {
        return;
      }
      if (read.kind === 'header') {
        const name = read.name.toLowerCase();
        if (headers.has(name) || ENGINE_READS.test(name)) {
          return;
        }
        if (name === 'cookie') {
          // The raw header: undeclared when the route declares no cookie, else only when the
          // visitor sent cookies it does not see.
          if (!declaresCookies || (withheld?.cookies.length ?? 0) > 0) {
            this.#report(route, 'cookie header', withheld?.cookies, input);
          }
          return;
        }
        this.#report(route, `header ${name}`, withheld?.headers.has(name) ? [name] : [], input);
      } else if (read.kind === 'cookie') {
        this.#report(route, `cookie ${read.name}`, withheld?.cookies, input);
      } else {
        this.#report(route, 'every header', withheld?.cookies, input);
      }
    };
  }

  #report(
    route: RouteInfo,
    input: string,
    withheld: readonly string[] | undefined,
    render: EngineInput,
  ): void {
    const series =
      this.counts.has(`${route.path} ${input}`) || this.counts.size < MAX_SERIES
        ? `${route.path} ${input}`
        : `${route.path} other`;
    const count = this.counts.get(series);
    this.counts.set(series, (count ?? 0) + 1);
    const said = `/${route.path} read ${input}, which its route does not declare`;
    if (this.#strict) {
      // Thrown where the page reads, and again by the Renderer once the render ends: Angular's
      // ErrorHandler would otherwise report it and let the page go out.
      render.refused ??= new OriginError(
        'ORIGIN_UNDECLARED_INPUT',
        `${said} (RENDER_INPUTS_STRICT)`,
      );
      throw render.refused;
    }
    if (count === undefined) {
      this.#log.warn(
        { code: noted('ORIGIN_UNDECLARED_INPUT'), route: route.path, input, withheld },
        `${said}: its shared page sees nothing there${withheldText(withheld)} — declare it with ` +
          'renderInputs() in app.routes.server.ts, mark the route private, or read it in the browser',
      );
    }
  }
}

/** A read: a header by name (get, has), a cookie by name (requestCookie), or every header. */
type Read = { kind: 'header' | 'cookie'; name: string } | { kind: 'every' };

function withheldText(withheld: readonly string[] | undefined): string {
  if (withheld === undefined) {
    return '';
  }
  return withheld.length === 0 ? ' (this visitor sent none)' : `; withheld: ${withheld.join(', ')}`;
}

/** Headers that report the names a render asks for, and that it went through them all. */
class WatchedHeaders extends Headers {
  readonly #read: (read: Read) => void;

  constructor(init: Headers, read: (read: Read) => void) {
    super(init);
    this.#read = read;
  }

  override get(name: string): string | null {
    this.#read({ kind: 'header', name });
    return super.get(name);
  }

  override has(name: string): boolean {
    this.#read({ kind: 'header', name });
    return super.has(name);
  }

  override forEach(
    callback: (value: string, key: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    this.#read({ kind: 'every' });
    super.forEach(callback, thisArg);
  }

  override entries(): HeadersIterator<[string, string]> {
    this.#read({ kind: 'every' });
    return super.entries();
  }

  override keys(): HeadersIterator<string> {
    this.#read({ kind: 'every' });
    return super.keys();
  }

  override values(): HeadersIterator<string> {
    this.#read({ kind: 'every' });
    return super.values();
  }

  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    this.#read({ kind: 'every' });
    return super.entries();
  }
}
