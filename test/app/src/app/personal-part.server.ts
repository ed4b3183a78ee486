import {
  type ApplicationConfig,
  ApplicationRef,
  Component,
  type ComponentRef,
  createComponent,
  CSP_NONCE,
  DOCUMENT,
  EnvironmentInjector,
  ErrorHandler,
  inject,
  InjectionToken,
  Injector,
  LOCALE_ID,
  mergeApplicationConfig,
  type Provider,
  REQUEST,
  REQUEST_CONTEXT,
  RESPONSE_INIT,
  type StateKey,
  TransferState,
} from '@angular/core';
import { bootstrapApplication } from '@angular/platform-browser';
import { INITIAL_CONFIG, platformServer, provideServerRendering } from '@angular/platform-server';
import { checkInputs, declarationOf, ENCLOSING_PART, PERSONAL_PARTS } from './personal-part';

/** What the origin asks of renderPart: one visitor's parts of one page. */
export interface PartRenderInput {
  /** The parts of one page to render for one visitor, in order. */
  parts: readonly { name: string; inputs: Record<string, unknown> }[];
  /** The page's URL (origin + path + query): the render's location. */
  url: string;
  /** The visitor's request as the parts may see it: the origin keeps only their declared cookies and headers. Provided as REQUEST. */
  request: Request;
  /** Provided as REQUEST_CONTEXT (the origin passes its render context). */
  context: unknown;
  /** Provided as CSP_NONCE when given: what the render writes (component styles, scripts) carries it. */
  nonce?: string;
  /** Provided as LOCALE_ID when given. */
  locale?: string;
}

export interface PartRenderOutput {
  /** Per asked part, in order: the HTML that goes between the markers for this visitor — the part component's host element (outerHTML) followed by its inline state, `<script type="application/json" data-origin-part-state>…</script>` (omitted when empty). */
  parts: string[];
  /** The `<style>` elements the render added to its document's head (the parts' component styles), serialized, for the origin to put before the first part. */
  styles: string;
  /** The headers the render set on RESPONSE_INIT, names in lowercase (the origin reads cache-groups from it: addCacheGroups works in parts). */
  headers: Record<string, string>;
}

export type RenderPart = (input: PartRenderInput) => Promise<PartRenderOutput>;

/** The part render's document: a root for the (empty) bootstrapped component, the parts beside it. */
const PART_DOCUMENT =
  '<html><head></head><body><origin-part-render></origin-part-render></body></html>';

/** What one call renders, for the root it bootstraps. */
interface PartRender {
  readonly asked: PartRenderInput['parts'];
  readonly state: PartTransferState;
  /** The parts created, in the order asked. */
  readonly refs: ComponentRef<unknown>[];
}

const PART_RENDER = new InjectionToken<PartRender>('PART_RENDER');

/**
 * What is bootstrapped: it creates the asked parts beside itself while the application starts,
 * before its first stable moment, while Angular's HTTP transfer cache still stores what they fetch.
 */
// eslint-disable-next-line @angular-eslint/component-selector -- the part render's own document
@Component({ selector: 'origin-part-render', template: '' })
class PartRenderRoot {
  constructor() {
    const { asked, state, refs } = inject(PART_RENDER);
    const parts = inject(PERSONAL_PARTS, { optional: true });
    const environmentInjector = inject(EnvironmentInjector);
    const appRef = inject(ApplicationRef);
    const body = inject(DOCUMENT).body;
    for (const [index, { name, inputs }] of asked.entries()) {
      const { component } = declarationOf(parts, name);
      const checked = checkInputs(name, component, inputs);
      // What the part's code asks of TransferState while it is created and first rendered is its own.
      state.current = index;
      try {
        const ref = createComponent(component, {
          environmentInjector,
          elementInjector: Injector.create({
            providers: [{ provide: ENCLOSING_PART, useValue: { name: () => name } }],
          }),
        });
        refs.push(ref);
        for (const [key, value] of Object.entries(checked)) {
          ref.setInput(key, value);
        }
        ref.changeDetectorRef.detectChanges();
        body.appendChild(ref.location.nativeElement as Node);
        appRef.attachView(ref.hostView);
      } finally {
        state.current = undefined;
      }
    }
  }
}

/**
 * The server bundle's `renderPart`: renders the asked parts of one page for one visitor, with the
 * app's config for parts (`config`: HttpClient, the API's URL, the transfer cache's options,
 * providePersonalParts; no router: a part render never navigates). One application per call, for
 * all the parts of the call; it rejects when a part throws (while it is created or rendered) and
 * the origin then sends every placeholder.
 */
export function createPartRenderer(config: ApplicationConfig): RenderPart {
  return async (input) => {
    const state = new PartTransferState();
    const refs: ComponentRef<unknown>[] = [];
    const errors: unknown[] = [];
    const responseInit: ResponseInit = {};
    const providers: Provider[] = [
      { provide: TransferState, useValue: state },
      { provide: PART_RENDER, useValue: { asked: input.parts, state, refs } satisfies PartRender },
      { provide: REQUEST, useValue: input.request },
      { provide: REQUEST_CONTEXT, useValue: input.context },
      { provide: RESPONSE_INIT, useValue: responseInit },
      // An error during a render's change detection does not reject whenStable: kept, it rejects the call.
      { provide: ErrorHandler, useValue: { handleError: (error: unknown) => errors.push(error) } },
    ];
    if (input.nonce !== undefined) {
      providers.push({ provide: CSP_NONCE, useValue: input.nonce });
    }
    if (input.locale !== undefined) {
      providers.push({ provide: LOCALE_ID, useValue: input.locale });
    }
    const platformRef = platformServer([
      { provide: INITIAL_CONFIG, useValue: { document: PART_DOCUMENT, url: input.url } },
    ]);
    let appRef: ApplicationRef | undefined;
    try {
      appRef = await bootstrapApplication(
        PartRenderRoot,
        mergeApplicationConfig(config, { providers: [provideServerRendering(), ...providers] }),
        { platformRef },
      );
      await appRef.whenStable();
      if (errors.length > 0) {
        throw errors[0];
      }
      const entries = state.entries();
      const document = appRef.injector.get(DOCUMENT);
      return {
        parts: refs.map((ref, index) => {
          const html = neutralizeEsi((ref.location.nativeElement as Element).outerHTML);
          return html + partStateScript(state.entriesOf(index, entries), input.nonce);
        }),
        // Domino's NodeList is not iterable: Array.from.
        styles: Array.from(
          document.head.querySelectorAll('style'),
          (style) => style.outerHTML,
        ).join(''),
        headers: headersOf(responseInit),
      };
    } finally {
      // The parts and the root first, while the application's injector lives: destroyed with
      // the platform, each view still attached is detached after that injector, which Angular
      // finds by throwing (and catching) NG0205 for each, 60 µs of the part's render (a CPU
      // profile of `node bench/part-floor.mjs`, 2026-12-07).
      // (A bootstrap that failed leaves them to the platform.)
      if (appRef !== undefined) {
        for (const ref of [...refs, ...appRef.components]) {
          ref.destroy();
        }
      }
      platformRef.destroy();
    }
  };
}

/**
 * TransferState that knows which part asked for each entry. Angular's HTTP transfer cache looks an
 * entry up (get) in the same synchronous call that sends the request, so a part's requests made
 * while it is created and first rendered (its constructor, ngOnInit, its first template) are its
 * own. An entry asked or written by no part in particular (a request made later, e.g. after data
 * arrived) goes with every part of the render: the same visitor's, never missing.
 */
class PartTransferState extends TransferState {
  /** The index of the part being created, while it is. */
  current: number | undefined;
  /** Per key, the parts that asked for it (-1: one outside any part's creation). */
  readonly #owners = new Map<string, Set<number>>();

  override get<T>(key: StateKey<T>, defaultValue: T): T {
    this.#own(key, this.current ?? ANY);
    return super.get(key, defaultValue);
  }

  override set<T>(key: StateKey<T>, value: T): void {
    if (this.current !== undefined) {
      this.#own(key, this.current);
    } else if (!this.#owners.has(key)) {
      this.#own(key, ANY);
    }
    super.set(key, value);
  }

  /** Every entry but Angular's own (hydration keys start with `__ng`), as the browser gets them. */
  entries(): Record<string, unknown> {
    const all = JSON.parse(this.toJson()) as Record<string, unknown>;
    for (const key of Object.keys(all)) {
      if (key.startsWith('__ng')) delete all[key];
    }
    return all;
  }

  /** The entries of part `index`: its own and those of no part in particular. */
  entriesOf(index: number, entries: Record<string, unknown>): Record<string, unknown> {
    const own: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(entries)) {
      const owners = this.#owners.get(key);
      if (owners === undefined || owners.has(ANY) || owners.has(index)) {
        own[key] = value;
      }
    }
    return own;
  }

  #own(key: string, part: number): void {
    let owners = this.#owners.get(key);
    if (owners === undefined) {
      owners = new Set();
      this.#owners.set(key, owners);
    }
    owners.add(part);
  }
}

const ANY = -1;

const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g;

/**
 * A part's inline state as the browser's providePersonalParts() reads it, or '' when it has none.
 * The JSON is safe in HTML: `<`, `>`, `&`, U+2028 and U+2029 are \u escapes, so neither
 * `</script>` nor `<esi:include` in an API's data ever appears raw.
 */
export function partStateScript(entries: Record<string, unknown>, nonce?: string): string {
  if (Object.keys(entries).length === 0) {
    return '';
  }
  const json = JSON.stringify(entries).replace(
    UNSAFE_IN_SCRIPT,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  const nonceAttribute = nonce === undefined ? '' : ` nonce="${escapeAttribute(nonce)}"`;
  return `<script type="application/json" data-origin-part-state${nonceAttribute}>${json}</script>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * Text is serialized with `<` escaped, attribute values are not (HTML does not require it): an
 * ESI tag in data a part prints in an attribute would reach a surrogate raw. `&lt;` means the same
 * there to the browser.
 */
function neutralizeEsi(html: string): string {
  return html.replace(/<(\/?esi:)/gi, '&lt;$1');
}

/** RESPONSE_INIT's headers as a record of lowercase names, whatever form the app left them in. */
function headersOf(init: ResponseInit): Record<string, string> {
  return init.headers === undefined ? {} : Object.fromEntries(new Headers(init.headers));
}
