// The pages step: everything that is not a file is the Angular app's to answer. Each route's
// render mode comes from the app's server routes; a route whose headers declare a shared-cache
// policy is answered through the render cache, which this step hands the way to produce its pages.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { RenderMode as AngularRenderMode } from '@angular/ssr';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import type { ContentSecurityPolicy } from '../csp/policy.ts';
import { answer, type Answer, REVALIDATE, respond } from '../http/answer.ts';
import { maxStaleMs } from '../http/cache-control.ts';
import { OriginError, report } from '../errors.ts';
import { throttledWarning } from '../logger.ts';
import type { GroupAlias } from '../cache/cache-groups.ts';
import { cacheStatusHeader } from '../cache/cache-status.ts';
import { outcomeOf, type Produce, servedHeaders } from '../cache/tiered-cache.ts';
import { PageCache, type PageStore, type PageTier } from '../render-cache/page-cache.ts';
import { type CachedPage, type PageParts, pathOf } from '../render-cache/page-entry.ts';
import { cacheKey, keyParts, storablePolicy } from '../render-cache/policy.ts';
import {
  renderRequestFor,
  type RenderRequest,
  sharedRequest,
  type Withheld,
  withheldFrom,
} from '../request/render-request.ts';
import { nameRequest, pageServed, type RenderMode, type RenderTiming } from '../channels.ts';
import { untilAborted } from '../until-aborted.ts';
import { HTML, pageBody, pageOf, type CacheGroupOptions, type PageMaking } from './page.ts';
import { requestSignal, TIMED_OUT } from './render-signal.ts';
import type { Rendered, Renderer } from './renderer.ts';
import type { RouteInfo } from './route-matcher.ts';
import type { PartRules } from './personal/declarations.ts';
import { esiTemplate, surrogateAssembles } from './personal/esi-template.ts';
import { findParts } from './personal/page-parts.ts';
import type { VisitorParts } from './personal/visitor-parts.ts';

/** The pages' own settings (RENDER_TIMEOUT_MS, CACHE_GROUP_ALIASES, RENDER_INPUTS_STRICT). */
export interface PageSettings {
  /** A render slower than this answers with the client-side shell instead. */
  renderTimeoutMs: number;
  /** CDN spellings of a page's Cache-Groups also sent: Surrogate-Key, Cache-Tag. */
  cacheGroupAliases: readonly GroupAlias[];
  /**
   * RENDER_INPUTS_STRICT: a shared page's render that reads an input its route does not declare
   * fails (500) instead of a warning (undeclared-reads.ts).
   */
  strictInputs: boolean;
}

export interface PagesOptions extends PageSettings {
  renderer: Renderer;
  lookupRoute: (path: string) => RouteInfo;
  /**
   * The build's client-side shell: client-only routes, and renders that ran out of time. Undefined
   * under `npm start`, whose build is in the dev server's memory: Angular's engine answers a
   * client-only route with its own shell, and a render out of time gets a 503 that says so.
   */
  clientShell: Buffer | undefined;
  /**
   * What the client-side shell's answers say of their page's language (a locale's Content-Language
   * and alternates, locales/locale-sites.ts); none in a plain build. Rendered pages get theirs from
   * the engine.
   */
  languageHeaders?: (path: string, status: number) => readonly string[] | undefined;
  /** The render cache's store, and its shared tier; undefined when RENDER_CACHE_BYTES is 0. */
  cache: { store: PageStore; shared: PageTier | undefined } | undefined;
  /** A fresh nonce on every HTML answer; undefined when CSP is off. */
  csp: ContentSecurityPolicy | undefined;
  /** X-Forwarded-* reach a render only from a trusted proxy (TRUST_PROXY). */
  trustProxy: boolean;
  /** The locale of these pages, in a localized build (its observers name it). */
  locale?: string;
  /** The build's id: in the URL of a personal part, so that a page never gets another build's. */
  build: string;
  /** The app's personal parts and what fills them for a visitor; undefined for an app without. */
  personal?: PersonalPages;
  log: Logger;
}

/** What the pages step needs of personal parts: the app's declarations, and the visitors' parts. */
export interface PersonalPages {
  rules: PartRules;
  visitors: VisitorParts;
}

/** What the fast path sends: the answer, and the headers that say how it was served. */
export interface FreshAnswer {
  answer: Answer;
  headers: readonly string[];
}

export interface Pages {
  /** The Koa step. */
  step: Middleware;
  /**
   * For the fast path: the answer to a plain request (no query, nothing to decode) whose page is
   * fresh in the render cache — the shared page, or a returning visitor's copy with the parts kept
   * for them — or undefined to leave the request to Koa.
   */
  fresh(
    origin: string,
    path: string,
    headers: IncomingHttpHeaders,
    res: ServerResponse,
  ): FreshAnswer | undefined;
  /** How traces and logs name the page of a path; undefined for a path no app of the build has. */
  routeOf(path: string): PageRoute | undefined;
  /** The `index`-th personal part of the page at `path` (the part endpoint, origin.ts). */
  part(ctx: Context, index: number, path: string): Promise<void>;
}

/** A page's route as traces and logs name it. */
export interface PageRoute {
  /** The server route's path as a template: `/products/:id`, `/`, `/**`. */
  template: string;
  mode: RenderMode;
  /** Its locale, in a localized build. */
  locale?: string;
}

/** A route's template and render mode, as its observers name it (observe/channels.ts). */
export function pageRoute(route: RouteInfo): PageRoute {
  return { template: `/${route.path}`, mode: RENDER_MODES[route.renderMode] };
}

const RENDER_MODES: Record<AngularRenderMode, RenderMode> = {
  [AngularRenderMode.Server]: 'server',
  [AngularRenderMode.Client]: 'client',
  [AngularRenderMode.Prerender]: 'prerendered',
};

/**
 * Client-only routes get the client-side shell; the rest are rendered (CommonEngine itself answers
 * prerendered routes from their files), through the render cache when their route says it may
 * share them. Renders are bounded in number and in time: one that takes too long is answered with
 * the client-side shell, which the browser renders.
 */
export function createPages(options: PagesOptions): Pages {
  return new PageAnswers(options);
}

class PageAnswers implements Pages {
  readonly #options: PagesOptions;
  readonly #groupOptions: CacheGroupOptions;
  readonly #shells: Shells | undefined;
  readonly #cache: PageCache | undefined;
  readonly #warnTimeout: ReturnType<typeof throttledWarning>;

  constructor(options: PagesOptions) {
    this.#options = options;
    this.#groupOptions = options;
    this.#shells = options.clientShell && createShells(options.clientShell, options.csp);
    this.#warnTimeout = throttledWarning(options.log, 'ORIGIN_RENDER_TIMEOUT');
    this.#cache =
      options.cache &&
      new PageCache({
        ...options.cache,
        produce: producePages(options, this.#groupOptions),
        patienceMs: options.renderTimeoutMs,
        log: options.log,
      });
  }

  readonly step: Middleware = async (ctx) => {
    const route = this.#options.lookupRoute(ctx.path);
    const page = pageRoute(route);
    nameRequest({
      res: ctx.res,
      route: page.template,
      mode: page.mode,
      locale: this.#options.locale,
    });
    if (route.renderMode === AngularRenderMode.Client && this.#shells !== undefined) {
      const status = route.status ?? 200;
      return respond(ctx, this.#shells.clientOnly(status), this.#languageOf(ctx.path, status));
    }
    const decision = keyOf(route, ctx);
    if (this.#cache !== undefined && decision !== undefined && 'key' in decision) {
      return this.#answerCached(ctx, this.#cache, decision.key, route);
    }
    const request = requestOf(route, ctx, decision, this.#options.trustProxy);
    const bypassed = this.#cache !== undefined && decision !== undefined && 'bypass' in decision;
    return this.#answerRendered(ctx, route, request, bypassed ? decision.bypass : undefined);
  };

  routeOf(path: string): PageRoute {
    return pageRoute(this.#options.lookupRoute(path));
  }

  fresh(
    origin: string,
    path: string,
    headers: IncomingHttpHeaders,
    res: ServerResponse,
  ): FreshAnswer | undefined {
    const rules = this.#cache && this.#options.lookupRoute(path).cacheRules;
    const decision = rules && cacheKey(rules, origin, path, '', headers);
    const served =
      this.#cache && decision && 'key' in decision ? this.#cache.fresh(decision.key) : undefined;
    if (served === undefined) {
      return undefined;
    }
    const { parts, answer: page } = served.entry;
    if (parts === undefined) {
      return { answer: page, headers: servedHeaders(served) };
    }
    // A surrogate's template of a page with parts is made through the pages step.
    if (this.#surrogate(headers, page)) {
      return undefined;
    }
    const visitors = this.#options.personal?.visitors;
    if (!visitors?.personal(parts, headers)) {
      return { answer: page, headers: servedHeaders(served) };
    }
    // A returning visitor's copy, as #answerCached makes it, when no part of it is to be rendered.
    const kept = visitors.kept(page, parts, { res, headers });
    return kept && { answer: kept, headers: cacheStatusHeader(served.status) };
  }

  /**
   * The `index`-th personal part of the page at `path` (and the request's query), for a surrogate
   * assembling the page (esi-template.ts), or anyone asking: this visitor's part when the request
   * carries its cookies (private), else its placeholder, shared as the page is. The page comes from
   * the render cache (rendered if it holds none), so that the part and its placeholder are the
   * page's own.
   */
  async part(ctx: Context, index: number, path: string): Promise<void> {
    const route = this.#options.lookupRoute(path);
    const decision =
      route.cacheRules &&
      cacheKey(route.cacheRules, ctx.state.origin, path, ctx.querystring, ctx.headers);
    const visitors = this.#options.personal?.visitors;
    if (this.#cache === undefined || visitors === undefined || !decision || !('key' in decision)) {
      throw new OriginError('ORIGIN_PART_NOT_FOUND');
    }
    const { signal, settle } = requestSignal(ctx, this.#options.renderTimeoutMs);
    try {
      const served = await this.#cache.serve(decision.key, signal, () =>
        withheldFrom(route.page.inputs, ctx.headers),
      );
      const { parts, answer: page } = served.entry;
      if (parts === undefined || index >= parts.slots.length) {
        throw new OriginError('ORIGIN_PART_NOT_FOUND');
      }
      const part = await visitors.part(page, parts, index, {
        res: ctx.res,
        headers: ctx.headers,
        url: keyParts(decision.key).url,
        route,
        signal,
      });
      respond(ctx, part, cacheStatusHeader(served.status));
    } catch (error) {
      this.#giveUpOrThrow(ctx, error, signal);
    } finally {
      settle();
    }
  }

  /** A surrogate that assembles ESI asks (believed from a trusted proxy, as X-Forwarded-* are). */
  #surrogate(headers: IncomingHttpHeaders, page: Answer): boolean {
    return (
      this.#options.trustProxy &&
      // A nonced page is no shared cache's: the surrogate passes it, and the origin fills its parts.
      page.perResponse === undefined &&
      surrogateAssembles(headers['surrogate-capability'])
    );
  }

  /**
   * Rendered for this request, not through the cache: a route without a shared-cache policy (its
   * render sees the client's request, its answer is private), or a shared page the cache does not
   * keep (a query string or spelling it does not key, or no cache): its render sees its URL and
   * declared inputs alone, as a cached one, and its answer keeps the route's policy. `bypassed`:
   * why the render cache, which is on, does not keep it (its Cache-Status detail).
   */
  async #answerRendered(
    ctx: Context,
    route: RouteInfo,
    request: RenderRequest,
    bypassed: string | undefined,
  ): Promise<void> {
    const { signal, settle } = requestSignal(ctx, this.#options.renderTimeoutMs);
    try {
      // Given up at the signal; the render itself holds its slot to its end (Angular cannot stop one).
      const made = withParts(
        await untilAborted(this.#options.renderer.render(request, route, signal), signal),
        this.#options,
        route,
      );
      const { page } = pageOf(
        made.rendered,
        makingOf(request, made.rendered, route),
        this.#options.csp,
        this.#groupOptions,
      );
      pageServed({
        res: ctx.res,
        cache: bypassed === undefined ? undefined : 'bypass',
        render: made.rendered.timing,
      });
      const status =
        bypassed === undefined
          ? undefined
          : cacheStatusHeader({ local: { fwd: 'bypass', detail: bypassed } });
      // A spelling the cache does not key has no template for a surrogate (its part URLs would name
      // no cached page): the surrogate gets a copy it does not keep, or it would give its
      // placeholders to every signed-in visitor (found by varnish.test.mjs's property).
      const unkept =
        this.#options.trustProxy && surrogateAssembles(ctx.headers['surrogate-capability']);
      respond(
        ctx,
        await this.#forVisitor(ctx, page.answer, made.parts, request.url, route, signal, unkept),
        status,
      );
    } catch (error) {
      this.#giveUpOrThrow(ctx, error, signal);
    } finally {
      settle();
    }
  }

  /** From the render cache, which renders it once however many ask. */
  async #answerCached(
    ctx: Context,
    cache: PageCache,
    key: string,
    route: RouteInfo,
  ): Promise<void> {
    const { signal, settle } = requestSignal(ctx, this.#options.renderTimeoutMs);
    try {
      // The asker: what a render for this request would not see of it, made only if a read asks.
      const withheld = () => withheldFrom(route.page.inputs, ctx.headers);
      const served = await cache.serve(
        key,
        signal,
        withheld,
        maxStaleMs(ctx.headers['cache-control']),
      );
      pageServed({ res: ctx.res, cache: outcomeOf(served), render: served.made });
      const { entry } = served;
      const answer =
        entry.parts !== undefined && this.#surrogate(ctx.headers, entry.answer)
          ? templateOf(entry.answer, entry.parts, this.#options.build, keyParts(key).url)
          : await this.#forVisitor(
              ctx,
              entry.answer,
              entry.parts,
              keyParts(key).url,
              route,
              signal,
            );
      // A visitor's page says how the shared one was served, and is no age of any cache's.
      respond(
        ctx,
        answer,
        answer === entry.answer ? servedHeaders(served) : cacheStatusHeader(served.status),
      );
    } catch (error) {
      this.#giveUpOrThrow(ctx, error, signal);
    } finally {
      settle();
    }
  }

  /**
   * The page for this request: with the visitor's personal parts in it when the page has parts and
   * the request carries a cookie one of them declares (pages/personal/), else the shared one;
   * `privateCopy`: a private copy of it even so (its parts' placeholders for a visitor without
   * their cookies).
   */
  #forVisitor(
    ctx: Context,
    page: Answer,
    parts: PageParts | undefined,
    url: string,
    route: RouteInfo,
    signal: AbortSignal,
    privateCopy = false,
  ): Answer | Promise<Answer> {
    const visitors = this.#options.personal?.visitors;
    if (
      parts === undefined ||
      visitors === undefined ||
      (!privateCopy && !visitors.personal(parts, ctx.headers))
    ) {
      return page;
    }
    return visitors.answer(page, parts, {
      res: ctx.res,
      headers: ctx.headers,
      url,
      route,
      signal,
    });
  }

  /** The shell's language headers for `path`, in a localized build. */
  #languageOf(path: string, status: number): readonly string[] | undefined {
    return this.#options.languageHeaders?.(path, status);
  }

  /** A render given up on: the shell if it timed out, nothing if the client left; any other failure is thrown. */
  #giveUpOrThrow(ctx: Context, error: unknown, signal: AbortSignal): void {
    if (error !== signal.reason) {
      throw error;
    }
    if (signal.reason !== TIMED_OUT) {
      // The client left (a reload, a closed tab): routine, nobody to answer.
      this.#options.log.debug({ url: ctx.url }, 'client left during a render');
      return;
    }
    this.#warnTimeout({ res: ctx.res });
    if (this.#shells === undefined) {
      respond(ctx, TIMED_OUT_WITHOUT_SHELL);
      return;
    }
    respond(ctx, this.#shells.timedOut, this.#languageOf(ctx.path, 200));
  }
}

/**
 * How the render cache gets a page: the key is the URL rendered (the validated origin, the path and
 * the significant query parameters) and the normalized inputs its render's request carries (and
 * nothing else of the request that asked), rendered in a slot for a request or in the background
 * for a refresh. A render that reported an error is sent as Angular rendered it, `no-store`, and
 * never stored.
 */
function producePages(
  options: PagesOptions,
  groupOptions: CacheGroupOptions,
): Produce<CachedPage, RenderTiming> {
  const { renderer, lookupRoute, csp } = options;
  return async (key, signal, asker) => {
    const route = lookupRoute(pathOf(key));
    const { url, inputs } = keyParts(key);
    const request = sharedRequest(url, inputs, asker as (() => Withheld) | undefined);
    const { rendered, parts } = withParts(
      signal
        ? await renderer.render(request, route, signal)
        : await renderer.renderInBackground(request, route),
      options,
      route,
    );
    const made = pageOf(rendered, makingOf(request, rendered, route), csp, groupOptions);
    const { page, final } = made;
    // Not one that failed, nor one that saw private data: sent as it is, never stored.
    const policy = made.shareable
      ? storablePolicy(page.answer.status, route.status, final)
      : undefined;
    return {
      entry: {
        answer: page.answer,
        groups: page.groups,
        policy: policy ?? NOT_STORED,
        storedAt: 0,
        refreshFailed: false,
        // Its data, which revalidating the page by path reaches too.
        sources: rendered.data && [...rendered.data.keys],
        parts,
      },
      storable: policy !== undefined,
      failed: rendered.reportedError,
      made: rendered.timing,
    };
  };
}

/** Each page's ESI template, made once per stored page (esi-template.ts). */
const templates = new WeakMap<PageParts, Answer>();

function templateOf(page: Answer, parts: PageParts, build: string, url: string): Answer {
  let template = templates.get(parts);
  if (template === undefined) {
    const { pathname, search } = new URL(url);
    template = esiTemplate(page, parts, build, pathname + search);
    templates.set(parts, template);
  }
  return template;
}

/** Routes whose page's parts could not be filled, said once each (ORIGIN_PART_MARKUP). */
const partProblemsSaid = new Set<string>();

/**
 * A render with its personal parts found and their markers taken out (personal/page-parts.ts): the
 * page as it is for an app without parts, or a render whose markers make no sense (said once per
 * route), which is then served shared, placeholders and all.
 */
function withParts(
  rendered: Rendered,
  options: Pick<PagesOptions, 'personal' | 'log'>,
  route: RouteInfo,
): { rendered: Rendered; parts: PageParts | undefined } {
  const rules = options.personal?.rules;
  if (rules === undefined || rendered.partToken === undefined) {
    return { rendered, parts: undefined };
  }
  const found = findParts(rendered.html, rendered.partToken, rules);
  if (found.problem !== undefined && !partProblemsSaid.has(route.path)) {
    partProblemsSaid.add(route.path);
    report(
      options.log,
      'ORIGIN_PART_MARKUP',
      { route: `/${route.path}` },
      `/${route.path}`,
      found.problem,
    );
  }
  return { rendered: { ...rendered, html: found.body }, parts: found.parts };
}

type KeyDecision = ReturnType<typeof cacheKey>;

/** A shared route's cache key for the request, or why it has none; undefined for any other route. */
function keyOf(route: RouteInfo, ctx: Context): KeyDecision | undefined {
  return (
    route.cacheRules &&
    cacheKey(route.cacheRules, ctx.state.origin, ctx.path, ctx.querystring, ctx.headers)
  );
}

/**
 * From the key when the route keys the request (its URL without the query parameters its route
 * ignores: those reach no render, cached or not), else from the URL as asked (the origin the guard
 * parsed and allowed, then the request target: an extra port, path or query in Host cannot change
 * the page rendered) and the request (render-request.ts).
 */
function requestOf(
  route: RouteInfo,
  ctx: Context,
  decision: KeyDecision | undefined,
  trustProxy: boolean,
): RenderRequest {
  if (decision !== undefined && 'key' in decision) {
    const { url, inputs } = keyParts(decision.key);
    return sharedRequest(url, inputs, () => withheldFrom(route.page.inputs, ctx.headers));
  }
  const url = `${ctx.state.origin}${ctx.path}${ctx.search}`;
  return renderRequestFor(route.page, url, ctx.headers, trustProxy);
}

/** A render out of time where there is no client-side shell to answer with (`npm start`). */
const TIMED_OUT_WITHOUT_SHELL = answer(
  503,
  ['Content-Type', 'text/plain; charset=utf-8', 'Cache-Control', 'no-store', 'Retry-After', '1'],
  Buffer.from('Service Unavailable: the render took longer than RENDER_TIMEOUT_MS'),
  { compress: false },
);

/** The policy of a page that must not be stored: never kept, so never read. */
const NOT_STORED = { freshMs: 0, staleWhileRevalidateMs: 0, staleIfErrorMs: 0 };

/** What pageOf needs to know of how a page was made. */
function makingOf(request: RenderRequest, rendered: Rendered, route: RouteInfo): PageMaking {
  return {
    sees: request.sees,
    failed: rendered.reportedError,
    vary: route.vary,
    data: rendered.data,
    path: new URL(request.url).pathname,
  };
}

/**
 * The client-side shell's answers, made once: for client-only routes (revalidated before each use,
 * with the route's status) and for renders that ran out of time (never stored). Under a policy,
 * each is nonced.
 */
interface Shells {
  clientOnly: (status: number) => Answer;
  timedOut: Answer;
}

function createShells(shell: Buffer, csp: ContentSecurityPolicy | undefined): Shells {
  const shellWith = (status: number, cacheControl: string): Answer => {
    const made = pageBody(shell, HTML, status, cacheControl, csp);
    return answer(status, ['Content-Type', HTML, ...made.headers], made.body, {
      validators: made.etag === undefined ? undefined : { etag: made.etag },
      perResponse: made.perResponse,
    });
  };
  // One answer per status a client-only route declares: a handful, made on first use.
  const byStatus = new Map<number, Answer>();
  return {
    clientOnly: (status) => {
      let shellAnswer = byStatus.get(status);
      if (shellAnswer === undefined) {
        shellAnswer = shellWith(status, REVALIDATE);
        byStatus.set(status, shellAnswer);
      }
      return shellAnswer;
    },
    timedOut: shellWith(200, 'no-store'),
  };
}
