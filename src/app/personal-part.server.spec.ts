import { HttpClient, provideHttpClient, withFetch } from '@angular/common/http';
import { Component, inject, input, type OnInit, signal, ɵsetDocument } from '@angular/core';
import {
  ɵBrowserDomAdapter as BrowserDomAdapter,
  provideClientHydration,
  withHttpTransferCacheOptions,
  withNoIncrementalHydration,
} from '@angular/platform-browser';
import { addCacheGroups } from './cache-groups';
import { providePersonalParts } from './personal-part';
import { createPartRenderer, partStateScript } from './personal-part.server';

describe('partStateScript', () => {
  it('writes JSON that no data can break out of: <, >, &, U+2028 and U+2029 escaped', () => {
    const entries = {
      k: { b: { name: '</script><esi:include src="http://x/"/> & \u2028\u2029 <!-- -->' }, s: 200 },
    };
    const script = partStateScript(entries);
    expect(script).toBe(
      '<script type="application/json" data-origin-part-state>' +
        '{"k":{"b":{"name":"\\u003c/script\\u003e\\u003cesi:include src=\\"http://x/\\"/\\u003e \\u0026 \\u2028\\u2029 \\u003c!-- --\\u003e"},"s":200}}' +
        '</script>',
    );
    const json = script.slice(script.indexOf('>') + 1, script.lastIndexOf('</script>'));
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(entries);
  });

  it('writes nothing for no state, and the nonce when there is one', () => {
    expect(partStateScript({})).toBe('');
    expect(partStateScript({ a: 1 }, 'r4nd"m')).toBe(
      '<script type="application/json" data-origin-part-state nonce="r4nd&quot;m">{"a":1}</script>',
    );
  });
});

/** A part that fetches in ngOnInit (`label`) and, with `late`, once that answer came (shared state). */
@Component({ selector: 'app-probe-part', template: `<p>{{ label() }}: {{ data() }}</p>` })
class ProbePart implements OnInit {
  readonly label = input('');
  readonly late = input(false);
  readonly fail = input(false);
  protected readonly data = signal('');
  readonly #http = inject(HttpClient);
  constructor() {
    addCacheGroups('probe');
  }
  ngOnInit(): void {
    if (this.fail()) {
      throw new Error('probe fails');
    }
    this.#http.get<{ v: string }>(`http://api.test/${this.label()}`).subscribe((r) => {
      this.data.set(r.v);
      if (this.late()) {
        this.#http.get<{ v: string }>('http://api.test/z').subscribe();
      }
    });
  }
}

describe('createPartRenderer', () => {
  const fetches: string[] = [];
  beforeEach(() => {
    fetches.length = 0;
    vi.stubGlobal('fetch', (input: RequestInfo | URL) => {
      const url = input instanceof Request ? input.url : String(input);
      fetches.push(url);
      return Promise.resolve(
        Response.json({ v: `<${url.slice(-1)}>` }, { headers: { 'cache-control': 'private' } }),
      );
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    // The server platform made Domino Angular's DOM and document, process-wide: the browser's again
    // for the other tests of this run.
    BrowserDomAdapter.makeCurrent();
    ɵsetDocument(document);
  });

  const renderPart = createPartRenderer({
    providers: [
      provideHttpClient(withFetch()),
      // No incremental hydration (nor its event replay): the unit tests' build is a browser's, where
      // it would start after the render's platform is gone.
      provideClientHydration(
        withHttpTransferCacheOptions({ includeNonCacheableRequests: true }),
        withNoIncrementalHydration(),
      ),
      providePersonalParts({ probe: { component: ProbePart, cookies: ['sid'] } }),
    ],
  });
  const render = (parts: { name: string; inputs: Record<string, unknown> }[]) =>
    renderPart({
      parts,
      url: 'http://shop.test/page',
      request: new Request('http://shop.test/page', { headers: { cookie: 'sid=1' } }),
      context: {},
      nonce: 'n0nce',
    });

  it('renders the asked parts in one application, each with its host element and the state it fetched', async () => {
    const output = await render([
      { name: 'probe', inputs: { label: 'a' } },
      { name: 'probe', inputs: { label: 'b', late: true } },
    ]);
    expect(fetches).toEqual(['http://api.test/a', 'http://api.test/b', 'http://api.test/z']);
    const entry = (v: string, url: string) =>
      `{"b":{"v":"\\u003c${v}\\u003e"},"h":{},"s":200,"st":"OK","u":"${url}","rt":"json"}`;
    const state = (...entries: string[]) =>
      `<script type="application/json" data-origin-part-state nonce="n0nce">{${entries.join(',')}}</script>`;
    const [a, b] = output.parts;
    // The answer asked once the first came is no part's in particular: every part carries it.
    const keyOf = (html: string, v: string) =>
      new RegExp(`"([0-9a-f]{64})":\\{"b":\\{"v":"\\\\u003c${v}`).exec(html)![1];
    const z = `"${keyOf(a, 'z')}":${entry('z', 'http://api.test/z')}`;
    expect(a).toBe(
      `<app-probe-part><p>a: &lt;a&gt;</p></app-probe-part>` +
        state(`"${keyOf(a, 'a')}":${entry('a', 'http://api.test/a')}`, z),
    );
    expect(b).toBe(
      `<app-probe-part><p>b: &lt;b&gt;</p></app-probe-part>` +
        state(`"${keyOf(b, 'b')}":${entry('b', 'http://api.test/b')}`, z),
    );
    expect(output.headers).toEqual({ 'cache-groups': '"probe"' });
    expect(output.styles).toBe('');
    expect(output.parts.join('')).not.toMatch(/ngh|ng-version|ng-server-context/);
  });

  it('rejects when a part throws, and when a part is not registered or its inputs are not JSON', async () => {
    await expect(
      render([
        { name: 'probe', inputs: { label: 'a' } },
        { name: 'probe', inputs: { fail: true } },
      ]),
    ).rejects.toThrowError('probe fails');
    await expect(render([{ name: 'cart', inputs: {} }])).rejects.toThrowError(
      /"cart" is not registered/,
    );
    await expect(render([{ name: 'probe', inputs: { label: Number.NaN } }])).rejects.toThrowError(
      /inputs\.label is NaN/,
    );
  });
});
