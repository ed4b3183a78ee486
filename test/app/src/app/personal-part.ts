import { isPlatformServer, NgComponentOutlet } from '@angular/common';
import {
  Component,
  computed,
  DOCUMENT,
  type EnvironmentProviders,
  inject,
  Injectable,
  InjectionToken,
  input,
  makeEnvironmentProviders,
  makeStateKey,
  type OnInit,
  PLATFORM_ID,
  provideAppInitializer,
  reflectComponentType,
  REQUEST_CONTEXT,
  TransferState,
  type Type,
  ViewEncapsulation,
} from '@angular/core';

/** A personal part: what an app declares for each name it uses in `<personal-part name="…">`. */
export interface PartDeclaration {
  /** The standalone component rendered for the visitor; its inputs are the part's inputs. */
  component: Type<unknown>;
  /** The cookies the part's render sees (at least one): a request with none of them is anonymous and gets the placeholder. */
  cookies: readonly string[];
  /** Request headers the part's render also sees (lowercase names), e.g. 'accept-language'. */
  headers?: readonly string[];
  /** Seconds a visitor's rendered part may be reused for that same visitor (0, the default: rendered on every page view). */
  maxAge?: number;
  /** Milliseconds the part's render may take before the placeholder is sent instead (default 300). */
  timeoutMs?: number;
}

/** The app's parts by name: what it passes to providePersonalParts() and its main.server exports. */
export type PersonalParts = Readonly<Record<string, PartDeclaration>>;

/** The registry given to providePersonalParts(). */
export const PERSONAL_PARTS = new InjectionToken<PersonalParts>('PERSONAL_PARTS');

/**
 * The part a piece of the app is rendered inside, if any: PersonalPart provides itself, and the
 * server's part render (personal-part.server.ts) provides the part it renders. Parts cannot nest.
 */
export const ENCLOSING_PART = new InjectionToken<{ name(): string }>('ENCLOSING_PART');

const PART_NAME = /^[a-z][a-z0-9-]{0,62}$/;
/** RFC 6265 cookie-name: an RFC 2616 token. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** An RFC 9110 field name, lowercase. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const DECLARATION_KEYS = new Set(['component', 'cookies', 'headers', 'maxAge', 'timeoutMs']);
/** What the origin's token may hold: it goes into an attribute the origin finds by exact search. */
const TOKEN = /^[A-Za-z0-9._~-]{1,128}$/;

/**
 * Registers the parts (a name → declaration map) for PersonalPart and, in the browser, merges each
 * part's inline state into TransferState before the app renders. Throws an Error naming the first
 * entry that is not a valid declaration.
 */
export function providePersonalParts(parts: PersonalParts): EnvironmentProviders {
  checkParts(parts);
  return makeEnvironmentProviders([
    { provide: PERSONAL_PARTS, useValue: parts },
    provideAppInitializer(mergePartStates),
  ]);
}

/**
 * A part of a shared page that depends on the visitor (a greeting, a cart count), with the
 * placeholder the shared page shows as its content:
 *
 *   <personal-part name="greeting" [inputs]="{ product: id }">
 *     <p class="greeting">Welcome!</p>
 *   </personal-part>
 *
 * On the server it renders the placeholder only, never the part: a shared page holds no visitor's
 * data, whoever renders it. When the origin renders the page (its REQUEST_CONTEXT carries
 * `personalParts.token`), the placeholder sits between two markers where the origin puts the part
 * rendered for each visitor (renderPart, personal-part.server.ts). In the browser it creates the
 * registered component with the inputs: Angular re-creates this element instead of hydrating it
 * (ngSkipHydration), and the part's first requests are answered from the state the origin's
 * render of it sent inline.
 */
@Component({
  // The element name apps write (no app prefix): the same in every app.
  // eslint-disable-next-line @angular-eslint/component-selector
  selector: 'personal-part',
  imports: [NgComponentOutlet],
  // No attributes of its own on the markers: the origin finds them by exact search.
  encapsulation: ViewEncapsulation.None,
  host: { ngSkipHydration: 'true' },
  providers: [{ provide: ENCLOSING_PART, useExisting: PersonalPart }],
  template: `
    @if (server) {
      @if (markers(); as m) {
        <template [attr.data-origin-part]="m.start"></template>
      }
      <ng-content />
      @if (markers(); as m) {
        <template [attr.data-origin-part-end]="m.end"></template>
      }
    } @else {
      <ng-container *ngComponentOutlet="component(); inputs: checkedInputs()" />
    }
  `,
})
export class PersonalPart implements OnInit {
  /** The part's name in providePersonalParts(). */
  readonly name = input.required<string>();
  /** The part component's inputs: JSON values only (the origin carries them in the page). */
  readonly inputs = input<Record<string, unknown>>({});

  protected readonly server = isPlatformServer(inject(PLATFORM_ID));
  readonly #parts = inject(PERSONAL_PARTS, { optional: true });
  readonly #enclosing = inject(ENCLOSING_PART, { optional: true, skipSelf: true });
  readonly #token = this.server ? originToken(inject(REQUEST_CONTEXT, { optional: true })) : null;
  readonly #counter = inject(PartCounter);
  /** This part's index among the origin's markers of this render; none without the origin. */
  #index: number | undefined;

  protected readonly component = computed(() => declarationOf(this.#parts, this.name()).component);
  protected readonly checkedInputs = computed(() =>
    checkInputs(this.name(), this.component(), this.inputs()),
  );
  protected readonly markers = computed(() => {
    if (this.#token === null || this.#index === undefined) {
      return undefined;
    }
    const prefix = `${this.#token}:${this.#index}`;
    return {
      start: `${prefix}:${this.name()}:${encodeInputs(this.checkedInputs())}`,
      end: prefix,
    };
  });

  ngOnInit(): void {
    // Here, not in the constructor: both parts' names are bound by now.
    if (this.#enclosing) {
      throw new Error(
        `personal-part "${this.name()}" is inside personal-part "${this.#enclosing.name()}": parts cannot nest`,
      );
    }
    this.checkedInputs();
    if (this.#token !== null) {
      this.#index = this.#counter.next();
    }
  }
}

/** Numbers the parts of one render (one application): the N of their markers. */
@Injectable({ providedIn: 'root' })
export class PartCounter {
  #next = 0;
  next(): number {
    return this.#next++;
  }
}

/** The origin's marker token from a render's REQUEST_CONTEXT, or null when it gave none. */
function originToken(context: unknown): string | null {
  const parts =
    typeof context === 'object' && context !== null
      ? (context as { personalParts?: unknown }).personalParts
      : undefined;
  const token =
    typeof parts === 'object' && parts !== null ? (parts as { token?: unknown }).token : undefined;
  if (typeof token !== 'string') {
    return null;
  }
  if (!TOKEN.test(token)) {
    throw new Error(
      `REQUEST_CONTEXT.personalParts.token must be 1 to 128 characters of A-Z a-z 0-9 . _ ~ -, got ${JSON.stringify(token.slice(0, 40))}`,
    );
  }
  return token;
}

/** The declaration of `name`, or an Error saying it is not registered. */
export function declarationOf(parts: PersonalParts | null, name: string): PartDeclaration {
  if (parts === null) {
    throw new Error(
      `personal-part "${name}": no parts are registered: add providePersonalParts({ … }) to the app's providers`,
    );
  }
  if (!Object.hasOwn(parts, name)) {
    throw new Error(
      `personal-part "${name}" is not registered: providePersonalParts() has ${Object.keys(parts)
        .map((known) => `"${known}"`)
        .join(', ')}`,
    );
  }
  return parts[name];
}

/**
 * `inputs` when they are JSON values the component declares as inputs; otherwise an Error naming
 * the part and the input.
 */
export function checkInputs(
  name: string,
  component: Type<unknown>,
  inputs: unknown,
): Record<string, unknown> {
  const problem = jsonProblem(inputs, 'inputs', new Set());
  if (problem !== undefined) {
    throw new Error(
      `personal-part "${name}": inputs must be JSON values (plain objects, arrays, strings, finite numbers, booleans, null): ${problem}`,
    );
  }
  if (Array.isArray(inputs) || inputs === null || typeof inputs !== 'object') {
    throw new Error(`personal-part "${name}": inputs must be an object of the part's inputs`);
  }
  const declared = declaredInputs(component);
  for (const key of Object.keys(inputs)) {
    if (!declared.has(key)) {
      // The selector, not the class name: a production build minifies class names.
      throw new Error(
        `personal-part "${name}": its component <${reflectComponentType(component)?.selector}> has no input "${key}" (its inputs: ${[...declared].join(', ') || 'none'})`,
      );
    }
  }
  return inputs as Record<string, unknown>;
}

const inputNames = new WeakMap<Type<unknown>, ReadonlySet<string>>();

function declaredInputs(component: Type<unknown>): ReadonlySet<string> {
  let names = inputNames.get(component);
  if (names === undefined) {
    names = new Set(reflectComponentType(component)?.inputs.map((i) => i.templateName) ?? []);
    inputNames.set(component, names);
  }
  return names;
}

/** Why `value` would not come back the same through JSON, or undefined when it would. */
function jsonProblem(value: unknown, path: string, seen: Set<object>): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') {
    return undefined;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : `${path} is ${value}`;
  }
  if (typeof value !== 'object') {
    return `${path} is ${value === undefined ? 'undefined' : `a ${typeof value}`}`;
  }
  if (seen.has(value)) {
    return `${path} refers to itself`;
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = jsonProblem(value[i], `${path}[${i}]`, seen);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype !== Object.prototype && prototype !== null) {
      return `${path} is a ${value.constructor?.name || 'object that is not plain'}`;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = jsonProblem(item, `${path}.${key}`, seen);
      if (problem !== undefined) return problem;
    }
    return undefined;
  } finally {
    seen.delete(value);
  }
}

/** base64url (no padding) of the UTF-8 of the inputs' JSON: how the markers carry them. */
export function encodeInputs(inputs: Record<string, unknown>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(inputs));
  let binary = '';
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Throws an Error naming the first entry of `parts` that is not a valid declaration. */
function checkParts(parts: PersonalParts): void {
  if (typeof parts !== 'object' || parts === null || Array.isArray(parts)) {
    throw new Error('providePersonalParts: expected an object of part declarations by name');
  }
  for (const [name, declaration] of Object.entries(parts)) {
    const bad = (why: string) => new Error(`providePersonalParts: part "${name}": ${why}`);
    if (!PART_NAME.test(name)) {
      throw bad(
        'a part name is 1 to 63 characters: a lowercase letter, then lowercase letters, digits or -',
      );
    }
    if (typeof declaration !== 'object' || declaration === null) {
      throw bad('expected a declaration { component, cookies, … }');
    }
    for (const key of Object.keys(declaration)) {
      if (!DECLARATION_KEYS.has(key)) {
        throw bad(
          `unknown property "${key}" (a declaration has ${[...DECLARATION_KEYS].join(', ')})`,
        );
      }
    }
    const { component, cookies, headers, maxAge, timeoutMs } = declaration;
    if (typeof component !== 'function' || !reflectComponentType(component)?.isStandalone) {
      throw bad('component must be a standalone component');
    }
    if (!Array.isArray(cookies) || cookies.length === 0) {
      throw bad(
        'cookies must list at least one cookie name (a visitor without them gets the placeholder)',
      );
    }
    for (const cookie of cookies) {
      if (typeof cookie !== 'string' || !COOKIE_NAME.test(cookie)) {
        throw bad(`cookie name ${JSON.stringify(cookie)} is not an RFC 6265 token`);
      }
    }
    if (headers !== undefined) {
      if (!Array.isArray(headers)) {
        throw bad('headers must be a list of lowercase header names');
      }
      for (const header of headers) {
        if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
          throw bad(`header name ${JSON.stringify(header)} is not a lowercase header name`);
        }
      }
    }
    if (maxAge !== undefined && !(Number.isInteger(maxAge) && maxAge >= 0)) {
      throw bad(`maxAge must be whole seconds from 0, got ${String(maxAge)}`);
    }
    if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
      throw bad(`timeoutMs must be whole milliseconds above 0, got ${String(timeoutMs)}`);
    }
  }
}

/**
 * In the browser, before the app renders: every part's inline state (what its render on the
 * origin fetched) into TransferState, so that the re-created part's first requests are answered
 * from it. An entry the page's own state already has is kept: the page hydrates with what it was
 * rendered from. Among parts, the first one's entry wins.
 */
function mergePartStates(): void {
  if (isPlatformServer(inject(PLATFORM_ID))) {
    return;
  }
  const state = inject(TransferState);
  for (const script of inject(DOCUMENT).querySelectorAll('script[data-origin-part-state]')) {
    let entries: unknown;
    try {
      entries = JSON.parse(script.textContent ?? '');
    } catch {
      console.warn('personal-part: an inline state that is not JSON was ignored');
      continue;
    }
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
      continue;
    }
    for (const [key, value] of Object.entries(entries)) {
      const stateKey = makeStateKey<unknown>(key);
      if (!state.hasKey(stateKey)) {
        state.set(stateKey, value);
      }
    }
  }
}
