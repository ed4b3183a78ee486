// What a shared page's render reads of the request that its route does not declare. Such a render
// sees its URL and declared inputs alone (request/render-request.ts), so a read of anything else
// finds nothing: a page that greets a signed-in visitor by the `sid` cookie greets nobody once its
// route is shared, and nothing would say so. Every such read is said at warn in every mode: once
// per route and input in this process, and again whenever it withholds a name not said before for
// the route (the first visitor may have sent no cookie); every read is counted.
// RENDER_INPUTS_STRICT makes it fail the render.
import { type FailureLog, OriginError, report } from '../errors.ts';
import { firstCookies } from '../request/render-inputs.ts';
import type { RenderRequest } from '../request/render-request.ts';
import { type Named, NamedOnce } from './named-once.ts';
import type { EngineInput } from './engine.ts';
import type { RouteInfo } from './route-matcher.ts';

export interface UndeclaredReadsOptions {
  log: FailureLog;
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
/**
 * At most this many withheld cookie (or header) names are said per route: visitors choose them.
 * Past it, one line says so and later names go unsaid; reads are still counted.
 */
export const MAX_NAMED_PER_ROUTE = 64;

/**
 * What a read withheld that the visitor sent: cookie names (sanitized and capped by
 * request/render-request.ts withheldFrom, `more` beyond those), or the header the code named.
 */
interface Sent {
  kind: 'cookies' | 'headers';
  names: readonly string[];
  more: number;
}

export class UndeclaredReads {
  readonly #log: UndeclaredReadsOptions['log'];
  readonly #strict: boolean;
  /** Reads counted by route and input (`/products/:id cookie sid`), for /healthz and the metrics. */
  readonly counts = new Map<string, number>();
  /** The withheld names already said, by route: never a metric label (visitors choose them). */
  readonly #named = new NamedOnce(MAX_NAMED_PER_ROUTE);

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
    const cookies: Sent | undefined = withheld && {
      kind: 'cookies',
      names: withheld.cookies,
      more: withheld.moreCookies,
    };
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
            this.#report(route, 'cookie header', cookies, input);
          }
          return;
        }
        const header: Sent | undefined = withheld && {
          kind: 'headers',
          names: withheld.headers.has(name) ? [name] : [],
          more: 0,
        };
        this.#report(route, `header ${name}`, header, input);
      } else if (read.kind === 'cookie') {
        this.#report(route, `cookie ${read.name}`, cookies, input);
      } else {
        this.#report(route, 'every header', cookies, input);
      }
    };
  }

  /**
   * Counts a read and says it: the first read of its input on its route, and any read that withholds
   * a name not yet said for the route (or, once, that the route has had too many to name).
   * `sent` is undefined for a render no visitor asked for (a background refresh).
   */
  #report(route: RouteInfo, input: string, sent: Sent | undefined, render: EngineInput): void {
    const series =
      this.counts.has(`${route.path} ${input}`) || this.counts.size < MAX_SERIES
        ? `${route.path} ${input}`
        : `${route.path} other`;
    const count = this.counts.get(series);
    this.counts.set(series, (count ?? 0) + 1);
    if (this.#strict) {
      // Thrown where the page reads, and again by the Renderer once the render ends: Angular's
      // ErrorHandler would otherwise report it and let the page go out.
      render.refused ??= new OriginError(
        'ORIGIN_UNDECLARED_INPUT',
        route.path,
        input,
        ' (RENDER_INPUTS_STRICT)',
      );
      throw render.refused;
    }
    const named = sent && this.#named.take(`${route.path} ${sent.kind}`, sent.names);
    if (count !== undefined && !named?.fresh.length && !named?.full) {
      return;
    }
    report(
      this.#log,
      'ORIGIN_UNDECLARED_INPUT',
      { route: route.path, input, withheld: named?.fresh },
      route.path,
      input,
      withheldText(sent, named),
    );
  }
}

/** A read: a header by name (get, has), a cookie by name (requestCookie), or every header. */
type Read = { kind: 'header' | 'cookie'; name: string } | { kind: 'every' };

/** What a line says of what the visitor sent: the names new to the route, at most. */
function withheldText(sent: Sent | undefined, named: Named | undefined): string {
  if (sent === undefined || named === undefined) {
    return '';
  }
  const full = named.full
    ? ` (more than ${MAX_NAMED_PER_ROUTE} ${sent.kind} named for this route: later ones are not)`
    : '';
  if (sent.names.length === 0) {
    return ' (this visitor sent none)';
  }
  if (named.fresh.length === 0) {
    return `; withheld: only ${sent.kind} named before${full}`;
  }
  const more = sent.more > 0 ? `, and ${sent.more} more` : '';
  return `; withheld: ${named.fresh.join(', ')}${more}${full}`;
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
