import { isPlatformServer } from '@angular/common';
import { DOCUMENT, inject, PLATFORM_ID, REQUEST, REQUEST_CONTEXT } from '@angular/core';

/** One request input a page depends on: the values that select another page, and the default. */
export interface RenderInput<Value extends string = string> {
  readonly values: readonly Value[];
  readonly default: Value;
}

/** What a route's page depends on in the request, beyond its URL. */
export interface RenderInputs {
  readonly cookies?: Readonly<Record<string, RenderInput>>;
  readonly headers?: Readonly<Record<string, RenderInput>>;
  /**
   * What the origin does when the page reads a cookie or header this declaration leaves out (it
   * sees nothing there): say so in its log once per route and input (`'warn'`, the default), or
   * nothing (`'ignore'`, for a page that reads the request on purpose and knows it).
   */
  readonly undeclaredReads?: 'warn' | 'ignore';
}

/**
 * Declares, beside a route's Cache-Control in app.routes.server.ts, the cookies and headers its
 * shared page depends on, each with a closed set of values and a default:
 *
 *   headers: {
 *     'Cache-Control': 's-maxage=60, stale-while-revalidate=600',
 *     ...renderInputs({ cookies: { currency: CURRENCY } }),
 *   }
 *
 * The origin renders one page per combination of values, keyed by them; the render's REQUEST
 * carries those inputs, normalized (a missing or unknown value is the default), and nothing else
 * of the request: no other cookie, no Authorization, no undeclared header. Every visitor then
 * gets a cached page, whatever else they carry. The origin reads this header and never sends it.
 * A declaration that is not a closed set, or that makes more than 64 pages of a URL, stops the
 * start with a line naming the route (docs/your-app.md).
 */
export function renderInputs(inputs: RenderInputs): Record<string, string> {
  return { 'Render-Inputs': JSON.stringify(inputs) };
}

/**
 * The value of a declared cookie for this page, normalized as the origin normalizes it: one of
 * `input.values`, else its default. On the server the origin gives it (REQUEST_CONTEXT), in the
 * browser `document.cookie`, so hydration sees what the server rendered. Call it in an injection
 * context. On a shared page's route that does not declare the cookie, it is always the default, and
 * the origin's log says so once (server/pages/undeclared-reads.ts).
 */
export function requestCookie<Value extends string>(
  name: string,
  input: RenderInput<Value>,
): Value {
  const value = isPlatformServer(inject(PLATFORM_ID))
    ? serverCookie(name)
    : cookieValue(inject(DOCUMENT).cookie, name);
  return value !== undefined && (input.values as readonly string[]).includes(value)
    ? (value as Value)
    : input.default;
}

/**
 * The request's Cookie header: on the server the render's REQUEST (none while prerendering, or
 * from a server that gives none), in the browser `document.cookie`. Call it in an injection context.
 * On a shared page's route the server's holds its declared cookies alone: read those with
 * requestCookie(), which names the cookie it wants.
 */
export function cookieHeader(): string {
  if (isPlatformServer(inject(PLATFORM_ID))) {
    return inject(REQUEST, { optional: true })?.headers.get('cookie') ?? '';
  }
  return inject(DOCUMENT).cookie;
}

/** A cookie's first value in a Cookie header (or `document.cookie`): what the origin takes too. */
export function cookieValue(header: string, name: string): string | undefined {
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === name) {
      return pair.slice(equals + 1).trim();
    }
  }
  return undefined;
}

/** What the origin gives a render as Angular's REQUEST_CONTEXT (server/pages/undeclared-reads.ts). */
interface OriginContext {
  renderInputs?: { cookie?: (name: string) => string | undefined };
}

/**
 * A cookie on the server: asked of the origin by name, so that a read of one a shared page's route
 * does not declare is said with its name; from the render's REQUEST under another server.
 */
function serverCookie(name: string): string | undefined {
  const context = inject(REQUEST_CONTEXT, { optional: true }) as OriginContext | null;
  const cookie = context?.renderInputs?.cookie;
  return cookie ? cookie(name) : cookieValue(cookieHeader(), name);
}
