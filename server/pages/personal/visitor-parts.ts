// A visitor's parts of a shared page: which of them this request is personal for (it carries a
// cookie the part declares), which are kept for this visitor already, and the render of the rest —
// one renderPart per set of declared inputs, so that each part's render sees what it declares and
// nothing else — each part bounded by its own timeout and falling back to its placeholder. The
// answer that carries them is personal-answer.ts's.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { parseCacheGroups } from '../../cache/cache-groups.ts';
import { partServed, type PartOutcome } from '../../channels.ts';
import type { ContentSecurityPolicy } from '../../csp/policy.ts';
import { errorHappened, OriginError } from '../../errors.ts';
import { answer, type Answer } from '../../http/answer.ts';
import { throttledWarning } from '../../logger.ts';
import type { PartEngine, RenderContext } from '../engine.ts';
import type { RenderedParts, Renderer } from '../renderer.ts';
import type { RouteInfo } from '../route-matcher.ts';
import { firstCookies } from '../../request/render-inputs.ts';
import type { PartRule, PartRules } from './declarations.ts';
import type { PageParts, PartSlot } from '../../render-cache/page-entry.ts';
import { partKey, type PartStore, seenInputs, type SeenInputs } from './part-cache.ts';
import { newStyles } from './part-styles.ts';
import { type Filled, personalAnswer, personalAnswerNow } from './personal-answer.ts';

export interface VisitorPartsOptions {
  rules: PartRules;
  /** The app's renderPart (this locale's, in a localized build). */
  engine: PartEngine;
  renderer: Renderer;
  /** Visitors' parts kept for them (PART_CACHE_BYTES); undefined: none kept. */
  store: PartStore | undefined;
  /** The build's id: a key of one build is never another's. */
  build: string;
  locale: string | undefined;
  csp: ContentSecurityPolicy | undefined;
  log: Logger;
}

/** What a personal answer is made for: the request, the page's URL and route, the request's signal. */
export interface PersonalRequest {
  res: ServerResponse;
  headers: IncomingHttpHeaders;
  /** The shared page's URL (its key's: the validated origin, the path, the significant query). */
  url: string;
  route: RouteInfo;
  signal: AbortSignal;
}

/** A part to render for a visitor, and how its slot hears of it. */
interface Asked {
  /** The shared page's body: the styles it has need not come again with the part. */
  page: Buffer;
  slot: PartSlot;
  rule: PartRule;
  seen: SeenInputs;
  key: string;
  /** Settles its slot, once: true when this call did (its render, or its timeout first). */
  settle: (html: Buffer | undefined) => boolean;
}

/** A slot as the request finds it: no key when it shows no cookie of the part (its placeholder). */
interface Looked {
  slot: PartSlot;
  rule: PartRule;
  seen: SeenInputs;
  key: string | undefined;
  /** This visitor's part, kept fresh. */
  kept: Buffer | undefined;
}

export class VisitorParts {
  readonly #options: VisitorPartsOptions;
  readonly #warnFailed: (name: string, error?: unknown) => void;
  readonly #warnTimeout: (name: string) => void;
  /** The last Cookie header parsed, and its cookies (#cookiesOf). */
  #lastHeader: string | undefined;
  #lastCookies = new Map<string, string>();

  constructor(options: VisitorPartsOptions) {
    this.#options = options;
    this.#warnFailed = perPart((name) =>
      throttledWarning(options.log, 'ORIGIN_PART_FAILED', { args: [name] }),
    );
    this.#warnTimeout = perPart((name) =>
      throttledWarning(options.log, 'ORIGIN_PART_TIMEOUT', { args: [name] }),
    );
  }

  /** Whether `headers` carry a cookie a part of the page declares: its answer is then this visitor's. */
  personal(parts: PageParts, headers: IncomingHttpHeaders): boolean {
    const header = headers.cookie;
    // An anonymous visitor's analytics cookies are not parsed: no declared name in the header, no part.
    if (header === undefined || !parts.cookies.some((name) => header.includes(name))) {
      return false;
    }
    const cookies = this.#cookiesOf(header);
    return parts.cookies.some((name) => cookies.has(name));
  }

  /**
   * The header's cookies, the last header's parsed once: a request asks up to three times (the fast
   * path's check, the pages step's, its parts' inputs) with the same header.
   */
  #cookiesOf(header: string): Map<string, string> {
    if (header !== this.#lastHeader) {
      this.#lastHeader = header;
      this.#lastCookies = firstCookies(header);
    }
    return this.#lastCookies;
  }

  /** The page with this visitor's parts (personal-answer.ts). */
  answer(page: Answer, parts: PageParts, request: PersonalRequest): Promise<Answer> {
    return personalAnswer({
      page,
      parts,
      filled: this.#fill(page.body, parts, request),
      acceptEncoding: request.headers['accept-encoding'],
    });
  }

  /**
   * One part of the page, on its own (a surrogate's include): this visitor's, for this browser
   * alone, when the request carries a cookie of the part; else its placeholder, as shareable as
   * the page (a surrogate keeps it for every visitor without the part's cookies). A part that
   * fails gets its placeholder, kept by nobody.
   */
  async part(
    page: Answer,
    parts: PageParts,
    index: number,
    request: PersonalRequest,
  ): Promise<Answer> {
    const slot = parts.slots[index];
    const one: PageParts = { slots: [slot], cookies: this.#options.rules.get(slot.name)!.cookies };
    const personal = this.personal(one, request.headers);
    const [filled] = this.#fill(page.body, one, request);
    const html = await filled;
    const placeholder = page.body.subarray(slot.start, slot.end);
    return fragmentAnswer(page, html ?? placeholder, personal ? 'personal' : 'shared');
  }

  /**
   * The page with this visitor's parts when every one of them is known now — kept for the visitor,
   * or the placeholder of a part whose cookies the request lacks — and the answer is made at once:
   * what the fast path sends a returning visitor. Undefined, and nothing told, when a part is to be
   * rendered (the pages step does it).
   */
  kept(
    page: Answer,
    parts: PageParts,
    request: Pick<PersonalRequest, 'res' | 'headers'>,
  ): Answer | undefined {
    const found = this.#lookup(parts, request.headers);
    if (found.some(({ key, kept }) => key !== undefined && kept === undefined)) {
      return undefined;
    }
    const made = personalAnswerNow({
      page,
      parts,
      filled: found.map(({ kept }) => kept),
      acceptEncoding: request.headers['accept-encoding'],
    });
    if (made !== undefined) {
      for (const { slot, key } of found) {
        this.#told(request.res, slot.name, key === undefined ? 'placeholder' : 'hit');
      }
    }
    return made;
  }

  /**
   * Per slot: its rule, what the request shows of its declared inputs, and unless it shows no
   * cookie of the part (its placeholder then), its key and this visitor's part if kept fresh.
   */
  #lookup(parts: PageParts, headers: IncomingHttpHeaders): Looked[] {
    const { rules, store, build, locale } = this.#options;
    const header = headers.cookie;
    const cookies = header === undefined ? new Map<string, string>() : this.#cookiesOf(header);
    return parts.slots.map((slot): Looked => {
      const rule = rules.get(slot.name)!;
      const seen = seenInputs(rule, cookies, headers);
      if (seen.cookies.length === 0) {
        return { slot, rule, seen, key: undefined, kept: undefined };
      }
      const key = partKey({ build, locale }, slot.name, slot.inputs, seen);
      const kept = rule.maxAgeMs > 0 ? store?.entries.lookup(key) : undefined;
      return { slot, rule, seen, key, kept: kept?.state === 'fresh' ? kept.entry.html : undefined };
    });
  }

  /** Per slot, this visitor's part (now when kept, else when ready), or undefined for its placeholder. */
  #fill(page: Buffer, parts: PageParts, request: PersonalRequest): Filled[] {
    const toRender = new Map<string, Asked[]>();
    const filled = this.#lookup(parts, request.headers).map(
      ({ slot, rule, seen, key, kept }): Filled => {
        if (key === undefined) {
          this.#told(request.res, slot.name, 'placeholder');
          return undefined;
        }
        if (kept !== undefined) {
          this.#told(request.res, slot.name, 'hit');
          return kept;
        }
        return new Promise<Buffer | undefined>((resolve) => {
          // Settled once: by its render, or by its timeout first.
          let settled = false;
          const settle = (html: Buffer | undefined) => {
            if (settled) {
              return false;
            }
            settled = true;
            resolve(html);
            return true;
          };
          // Parts that see the same inputs and wait as long render together: one bootstrap for all
          // of them, and none held past its own timeout by a slower one's.
          const inputsOf = `${rule.cookies.join(';')}|${rule.headers.join(';')}|${rule.timeoutMs}`;
          const group = toRender.get(inputsOf) ?? [];
          group.push({ page, slot, rule, seen, key, settle });
          toRender.set(inputsOf, group);
        });
      },
    );
    for (const group of toRender.values()) {
      this.#render(group, request);
    }
    return filled;
  }

  /**
   * One renderPart for `asked`; each part's slot settles with it, or at its own timeout. When parts
   * rendered together fail, each is rendered again alone (within the same timeouts): one part's
   * throw or failed data costs the others nothing but the retry.
   */
  #render(
    asked: readonly Asked[],
    request: PersonalRequest,
    timers = this.#timers(asked, request),
  ): void {
    const { engine, renderer, csp, locale } = this.#options;
    const rendering = new Promise<RenderedParts>((resolve) =>
      resolve(
        renderer.renderParts(
          engine,
          {
            parts: asked.map(({ slot }) => ({ name: slot.name, inputs: slot.inputs })),
            url: request.url,
            // A value the Fetch API refuses (a byte Node's parser let through) fails the parts.
            request: visitorRequest(request.url, asked[0].seen),
            context: visitorContext(asked[0].seen),
            nonce: csp?.placeholder,
            locale,
          },
          request.route,
          request.signal,
        ),
      ),
    );
    const alone = (error: unknown) => {
      if (asked.length > 1 && !isShed(error)) {
        asked.forEach((one, i) => this.#render([one], request, [timers[i]]));
        return true;
      }
      return false;
    };
    rendering.then(
      (rendered) => {
        if (failedParts(rendered) && alone(undefined)) {
          return;
        }
        timers.forEach(clearTimeout);
        this.#rendered(asked, rendered, request.res);
      },
      (error: unknown) => {
        if (alone(error)) {
          return;
        }
        timers.forEach(clearTimeout);
        this.#notRendered(asked, error, request.res);
      },
    );
  }

  /** Per part, what settles its slot with its placeholder at its timeout. */
  #timers(asked: readonly Asked[], request: PersonalRequest): NodeJS.Timeout[] {
    return asked.map(({ slot, rule, settle }) =>
      setTimeout(() => {
        if (settle(undefined)) {
          this.#warnTimeout(slot.name);
          this.#told(request.res, slot.name, 'timeout');
        }
      }, rule.timeoutMs),
    );
  }

  /** Each part in its slot, and kept for the visitor; all of them placeholders if the render failed. */
  #rendered(asked: readonly Asked[], rendered: RenderedParts, res: ServerResponse): void {
    const failed = failedParts(rendered);
    const groups = [
      ...(parseCacheGroups(rendered.headers['cache-groups'] ?? '') ?? []),
      ...(rendered.data?.groups ?? []),
    ];
    asked.forEach((one, i) => {
      const html = rendered.parts[i];
      if (failed || typeof html !== 'string') {
        this.#failed(res, one, new Error('the part reported an error while rendering'));
        return;
      }
      const bytes = Buffer.from(newStyles(one.page, rendered.styles) + html);
      // Kept even when it came too late for this page: the visitor's next one has it.
      this.#keep(one, bytes, groups);
      if (one.settle(bytes)) {
        this.#told(res, one.slot.name, 'rendered');
      }
    });
  }

  /** The render failed, or was shed under load: placeholders. */
  #notRendered(asked: readonly Asked[], error: unknown, res: ServerResponse): void {
    for (const one of asked) {
      if (!isShed(error)) {
        this.#failed(res, one, error);
      } else if (one.settle(undefined)) {
        errorHappened('ORIGIN_OVERLOADED', { res });
        this.#told(res, one.slot.name, 'shed');
      }
    }
  }

  /** Kept for this visitor, when the part says for how long. */
  #keep(asked: Asked, html: Buffer, groups: readonly string[]): void {
    const { store } = this.#options;
    if (store === undefined || asked.rule.maxAgeMs === 0) {
      return;
    }
    store.store(asked.key, {
      html,
      groups,
      policy: { freshMs: asked.rule.maxAgeMs, staleWhileRevalidateMs: 0, staleIfErrorMs: 0 },
      storedAt: 0,
      refreshFailed: false,
    });
  }

  #failed(res: ServerResponse, asked: Asked, error: unknown): void {
    if (asked.settle(undefined)) {
      this.#warnFailed(asked.slot.name, error);
      this.#told(res, asked.slot.name, 'failed');
    }
  }

  #told(res: ServerResponse, part: string, outcome: PartOutcome): void {
    partServed({ res, part, outcome });
  }
}

/** Whether a render's parts are not to be used: it reported an error, or its data failed. */
function failedParts(rendered: RenderedParts): boolean {
  return rendered.reportedError || rendered.data?.failed === true;
}

/** Whether the render was refused under load: no part is retried then. */
function isShed(error: unknown): boolean {
  return error instanceof OriginError && error.code === 'ORIGIN_OVERLOADED';
}

/**
 * A part as an answer of its own: HTML, no validator (a part is asked for on every page view of a
 * visitor), private when it is this visitor's; else it shares the page's caching headers (its
 * Cache-Control, targeted forms, groups), so that a surrogate keeps an anonymous placeholder and a
 * revalidation of the page reaches it.
 */
function fragmentAnswer(page: Answer, html: Buffer, kind: 'personal' | 'shared'): Answer {
  const headers = ['Content-Type', 'text/html; charset=utf-8'];
  if (kind === 'personal') {
    headers.push('Cache-Control', 'private, no-store');
  } else {
    for (let i = 0; i < page.headers.length; i += 2) {
      if (SHARED_HEADERS.test(page.headers[i])) {
        headers.push(page.headers[i], page.headers[i + 1]);
      }
    }
  }
  return answer(200, headers, html, { compress: false });
}

/** What a placeholder keeps of its page's headers: how caches keep it, and what purges it. */
const SHARED_HEADERS =
  /^(?:cache-control|cdn-cache-control|surrogate-control|cache-groups|surrogate-key|cache-tag|xkey|content-language|vary)$/i;

/** A throttled warning per part name (the app's parts: a bounded set). */
function perPart(
  make: (name: string) => (context?: { error?: unknown }) => void,
): (name: string, error?: unknown) => void {
  const warnings = new Map<string, (context?: { error?: unknown }) => void>();
  return (name, error) => {
    let warn = warnings.get(name);
    if (warn === undefined) {
      warn = make(name);
      warnings.set(name, warn);
    }
    warn({ error });
  };
}

/** The request a part's render sees: the page's URL, its declared cookies and headers alone. */
function visitorRequest(url: string, seen: SeenInputs): Request {
  const headers = new Headers();
  if (seen.cookies.length > 0) {
    headers.set('cookie', seen.cookies.map(([name, value]) => `${name}=${value}`).join('; '));
  }
  for (const [name, value] of seen.headers) {
    headers.set(name, value);
  }
  return new Request(url, { headers });
}

/** REQUEST_CONTEXT of a part's render: requestCookie() gets the declared cookies alone. */
function visitorContext(seen: SeenInputs): RenderContext {
  const cookies = new Map(seen.cookies);
  return { renderInputs: { cookie: (name) => cookies.get(name) } };
}
