import {
  Component,
  input,
  makeStateKey,
  PLATFORM_ID,
  type Provider,
  REQUEST_CONTEXT,
  TransferState,
  type Type,
} from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { PersonalPart, type PersonalParts, providePersonalParts } from './personal-part';

/** A part component: what the registry names, created only in the browser. */
@Component({
  selector: 'app-test-part',
  template: `<p class="part">Product {{ product() }} {{ q() }}</p>`,
})
class TestPart {
  static created = 0;
  readonly product = input(0);
  readonly q = input('');
  constructor() {
    TestPart.created++;
  }
}

const parts: PersonalParts = { greeting: { component: TestPart, cookies: ['sid'] } };

/** What the page with one part names and gives it (set before each render). */
let one: { name: string; inputs: unknown } = { name: 'greeting', inputs: {} };

@Component({
  selector: 'app-one-part',
  imports: [PersonalPart],
  template: `<personal-part [name]="name" [inputs]="inputs"
    ><p class="placeholder">…</p></personal-part
  >`,
})
class OnePart {
  readonly name = one.name;
  readonly inputs = one.inputs as Record<string, unknown>;
}

@Component({
  selector: 'app-two-parts',
  imports: [PersonalPart],
  template: `
    <personal-part name="greeting" [inputs]="{ product: 7 }"
      ><p class="placeholder">Welcome!</p></personal-part
    >
    <personal-part name="greeting" [inputs]="{ product: 8 }"
      ><p class="placeholder">Hello!</p></personal-part
    >
  `,
})
class TwoParts {}

@Component({
  selector: 'app-nested-parts',
  imports: [PersonalPart],
  template: `
    <personal-part name="greeting"
      ><personal-part name="greeting">inner</personal-part></personal-part
    >
  `,
})
class NestedParts {}

/** `page` rendered with `providers` (server or browser): its element once stable. */
async function render(page: Type<unknown>, providers: Provider[]) {
  TestBed.configureTestingModule({ providers: [providePersonalParts(parts), ...providers] });
  const fixture = TestBed.createComponent(page);
  await fixture.whenStable();
  return fixture.nativeElement as HTMLElement;
}

/** The page with one part named `name`, given `inputs`. */
function renderOne(name: string, inputs: unknown, providers: Provider[]) {
  one = { name, inputs };
  return render(OnePart, providers);
}

/** A page render on the server, with the REQUEST_CONTEXT the origin (or another server) gives. */
const onServer = (context: unknown): Provider[] => [
  { provide: PLATFORM_ID, useValue: 'server' },
  { provide: REQUEST_CONTEXT, useValue: context },
];

/** The parts' content without Angular's comment anchors. */
function contentOf(page: HTMLElement): string[] {
  return [...page.querySelectorAll('personal-part')].map((part) =>
    part.innerHTML.replace(/<!--[^>]*-->/g, ''),
  );
}

describe('PersonalPart', () => {
  beforeEach(() => {
    TestPart.created = 0;
    // Angular's ErrorHandler says each error before the test sees it rethrown.
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => vi.restoreAllMocks());

  it("renders, on the origin's server render, the placeholder between the exact markers, numbered in order", async () => {
    const page = await render(TwoParts, onServer({ personalParts: { token: 'T0k-en' } }));
    expect(contentOf(page)).toEqual([
      '<template data-origin-part="T0k-en:0:greeting:eyJwcm9kdWN0Ijo3fQ"></template>' +
        '<p class="placeholder">Welcome!</p>' +
        '<template data-origin-part-end="T0k-en:0"></template>',
      '<template data-origin-part="T0k-en:1:greeting:eyJwcm9kdWN0Ijo4fQ"></template>' +
        '<p class="placeholder">Hello!</p>' +
        '<template data-origin-part-end="T0k-en:1"></template>',
    ]);
    expect(TestPart.created).toBe(0);
    // Angular re-creates the element in the browser instead of hydrating it.
    expect(page.querySelector('personal-part')!.hasAttribute('ngskiphydration')).toBe(true);
  });

  it('carries the inputs as base64url of their UTF-8 JSON, without padding', async () => {
    const page = await renderOne(
      'greeting',
      { q: 'é€ <x>' },
      onServer({ personalParts: { token: 'T' } }),
    );
    expect(page.querySelector('template')!.getAttribute('data-origin-part')).toBe(
      'T:0:greeting:eyJxIjoiw6nigqwgPHg-In0',
    );
  });

  it('renders the placeholder alone on a server render without the origin', async () => {
    for (const context of [
      undefined,
      null,
      'personalParts',
      {},
      { personalParts: null },
      { personalParts: { token: 42 } },
    ]) {
      const page = await render(TwoParts, onServer(context));
      expect(contentOf(page)).toEqual([
        '<p class="placeholder">Welcome!</p>',
        '<p class="placeholder">Hello!</p>',
      ]);
      expect(TestPart.created).toBe(0);
      TestBed.resetTestingModule();
    }
  });

  it('refuses a token that the markers could not carry as given', async () => {
    await expect(
      render(TwoParts, onServer({ personalParts: { token: 'a"b' } })),
    ).rejects.toThrowError(/REQUEST_CONTEXT\.personalParts\.token/);
  });

  it('creates the registered component with the inputs in the browser, instead of the placeholder', async () => {
    const page = await render(TwoParts, []);
    expect(TestPart.created).toBe(2);
    expect([...page.querySelectorAll('.part')].map((p) => p.textContent)).toEqual([
      'Product 7 ',
      'Product 8 ',
    ]);
    expect(page.querySelector('.placeholder')).toBeNull();
    expect(page.querySelector('template')).toBeNull();
  });

  it('throws when a part is inside another, in every mode', async () => {
    for (const providers of [onServer({ personalParts: { token: 'T' } }), onServer({}), []]) {
      await expect(render(NestedParts, providers)).rejects.toThrowError(
        'personal-part "greeting" is inside personal-part "greeting": parts cannot nest',
      );
      TestBed.resetTestingModule();
    }
  });

  it('throws when a part is not registered', async () => {
    for (const providers of [onServer({ personalParts: { token: 'T' } }), onServer({}), []]) {
      await expect(renderOne('cart', {}, providers)).rejects.toThrowError(
        /personal-part "cart" is not registered/,
      );
      TestBed.resetTestingModule();
    }
  });

  it('throws when the inputs are not JSON values, naming the part and the input', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { product: new Date(0) },
        /personal-part "greeting": inputs must be JSON values.*inputs\.product is a Date/,
      ],
      [{ product: Number.NaN }, /inputs\.product is NaN/],
      [{ product: () => 1 }, /inputs\.product is a function/],
      [{ product: [1, undefined] }, /inputs\.product\[1\] is undefined/],
      [new Map(), /inputs is a Map/],
      [[7], /inputs must be an object/],
      [{ other: 1 }, /<app-test-part> has no input "other"/],
    ];
    for (const [inputs, error] of cases) {
      for (const providers of [onServer({ personalParts: { token: 'T' } }), []]) {
        await expect(renderOne('greeting', inputs, providers)).rejects.toThrowError(error);
        TestBed.resetTestingModule();
      }
    }
  });
});

describe('providePersonalParts', () => {
  it('refuses a declaration it cannot serve, naming the entry', () => {
    const cases: [unknown, RegExp][] = [
      [{ Greeting: { component: TestPart, cookies: ['sid'] } }, /part "Greeting": a part name/],
      [{ ['a'.repeat(64)]: { component: TestPart, cookies: ['sid'] } }, /a part name is 1 to 63/],
      [{ greeting: { component: TestPart, cookies: [] } }, /part "greeting": cookies must list/],
      [{ greeting: { component: TestPart, cookies: ['s id'] } }, /cookie name "s id"/],
      [{ greeting: { component: TestPart, cookies: ['sid'], headers: ['Accept'] } }, /"Accept"/],
      [{ greeting: { component: TestPart, cookies: ['sid'], maxAge: -1 } }, /maxAge/],
      [{ greeting: { component: TestPart, cookies: ['sid'], timeoutMs: 0 } }, /timeoutMs/],
      [
        { greeting: { component: TestPart, cookies: ['sid'], maxage: 60 } },
        /unknown property "maxage"/,
      ],
      [
        { greeting: { component: class NotAComponent {}, cookies: ['sid'] } },
        /standalone component/,
      ],
    ];
    for (const [declarations, error] of cases) {
      expect(() => providePersonalParts(declarations as PersonalParts)).toThrowError(error);
    }
  });

  it('merges each part inline state into TransferState in the browser, the first one winning', () => {
    const scripts = ['{"a":1,"b":{"x":"<"}}', 'not json', '{"a":2,"c":3}'].map((text) => {
      const script = document.createElement('script');
      script.type = 'application/json';
      script.setAttribute('data-origin-part-state', '');
      script.textContent = text;
      return document.body.appendChild(script);
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      TestBed.configureTestingModule({ providers: [providePersonalParts(parts)] });
      const state = TestBed.inject(TransferState);
      expect(state.get(makeStateKey<number>('a'), 0)).toBe(1);
      expect(state.get(makeStateKey<unknown>('b'), {})).toEqual({ x: '<' });
      expect(state.get(makeStateKey<number>('c'), 0)).toBe(3);
      expect(warn).toHaveBeenCalledOnce();
    } finally {
      warn.mockRestore();
      scripts.forEach((script) => script.remove());
    }
  });
});
