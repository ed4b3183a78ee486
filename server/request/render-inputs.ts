// What a route's page may depend on in the request, as the route declares it (the app's
// `renderInputs()` helper writes the declaration into its route's headers): cookies and headers,
// each with a closed set of values and a default. A request's values are normalized to that set —
// a missing, unknown, malformed or repeated value is the default — so a shared page is rendered
// from those values alone, and a key holds nothing a visitor chose beyond one of them.
import { StartupError } from '../startup-error.ts';

/** The route header that carries the declaration: read by the origin, never sent to clients. */
export const RENDER_INPUTS_HEADER = 'render-inputs';

/** The most variants (pages per URL) one route may declare: each is a page every cache keeps. */
export const MAX_VARIANTS = 64;

/** One input: the values that select another page, and the one a request without them gets. */
export interface Input {
  kind: 'cookie' | 'header';
  /** A cookie's name as sent, or a header's name in lower case. */
  name: string;
  values: ReadonlySet<string>;
  default: string;
}

/** A route's declared inputs, in a fixed order (cookies, then headers, each by name). */
export interface RenderInputs {
  readonly inputs: readonly Input[];
  /** The Vary header a shared cache needs: `Cookie` and the header names, or undefined for none. */
  readonly vary: string | undefined;
  /**
   * What a read of an input the route does not declare makes the origin do: say it (`warn`, the
   * default) or nothing (`ignore`: a page that reads the request on purpose and knows it sees
   * nothing there). pages/undeclared-reads.ts.
   */
  readonly undeclaredReads: 'warn' | 'ignore';
}

/** A cookie name (RFC 6265 token) or a header field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** A cookie value the origin passes on: RFC 6265 cookie-octets, bounded. */
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{1,128}$/;
/** A header value it passes on: visible ASCII and inner spaces, bounded. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;

/**
 * The inputs a route declares in its headers (`Render-Inputs`, JSON as `renderInputs()` writes
 * it), or undefined when it declares none. Throws a StartupError naming the route when the
 * declaration is not a closed set of valid values with a default among them, or when its
 * variants exceed MAX_VARIANTS.
 */
export function parseRenderInputs(
  route: string,
  value: string | undefined,
): RenderInputs | undefined {
  if (value === undefined) {
    return undefined;
  }
  const fail = (why: string): never => {
    throw new StartupError(`route "${route}" declares its render inputs wrongly: ${why}`);
  };
  let declared: unknown;
  try {
    declared = JSON.parse(value);
  } catch {
    return fail('the Render-Inputs header is not what renderInputs() writes (JSON)');
  }
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) {
    return fail('expected { cookies?: {...}, headers?: {...} }');
  }
  const {
    cookies = {},
    headers = {},
    undeclaredReads = 'warn',
    ...rest
  } = declared as Record<string, unknown>;
  if (Object.keys(rest).length > 0) {
    fail(
      `unknown ${Object.keys(rest)
        .map((key) => JSON.stringify(key))
        .join(', ')}: only cookies, headers and undeclaredReads`,
    );
  }
  if (undeclaredReads !== 'warn' && undeclaredReads !== 'ignore') {
    fail('undeclaredReads must be "warn" or "ignore"');
  }
  const inputs = [
    ...inputsOf('cookie', cookies, COOKIE_VALUE, fail),
    ...inputsOf('header', headers, HEADER_VALUE, fail),
  ];
  const variants = inputs.reduce((product, input) => product * input.values.size, 1);
  if (variants > MAX_VARIANTS) {
    fail(`${variants} variants of each page, more than ${MAX_VARIANTS}: declare fewer values`);
  }
  const vary = [
    ...(inputs.some((input) => input.kind === 'cookie') ? ['Cookie'] : []),
    ...inputs.filter((input) => input.kind === 'header').map((input) => input.name),
  ];
  return {
    inputs,
    vary: vary.length === 0 ? undefined : vary.join(', '),
    undeclaredReads: undeclaredReads as RenderInputs['undeclaredReads'],
  };
}

function inputsOf(
  kind: Input['kind'],
  declared: unknown,
  valid: RegExp,
  fail: (why: string) => never,
): Input[] {
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) {
    return fail(`${kind}s must be an object of names`);
  }
  return Object.entries(declared as Record<string, unknown>)
    .map(([name, input]): Input => {
      if (!TOKEN.test(name)) {
        fail(`${JSON.stringify(name)} is not a ${kind} name`);
      }
      const { values, default: fallback } = (input ?? {}) as {
        values?: unknown;
        default?: unknown;
      };
      if (
        !Array.isArray(values) ||
        values.length === 0 ||
        !values.every((v) => typeof v === 'string' && valid.test(v))
      ) {
        fail(
          `${kind} ${name}: values must be a non-empty list of plain ${kind} values (a closed set)`,
        );
      }
      if (typeof fallback !== 'string' || !(values as string[]).includes(fallback)) {
        fail(`${kind} ${name}: its default must be one of its values`);
      }
      return {
        kind,
        name: kind === 'header' ? name.toLowerCase() : name,
        values: new Set(values as string[]),
        default: fallback,
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every input the routes declare, each once with the union of its values (for tools that key or
 * load pages as the origin does: deploy/varnish/inputs.mjs, the bench). Throws when two routes
 * give one input different defaults.
 */
export function declaredInputs(
  routes: readonly { path: string; headers?: Record<string, string> }[],
): Input[] {
  const inputs = new Map<string, Input>();
  for (const route of routes) {
    const header = Object.entries(route.headers ?? {}).find(
      ([name]) => name.toLowerCase() === RENDER_INPUTS_HEADER,
    )?.[1];
    for (const input of parseRenderInputs(route.path, header)?.inputs ?? []) {
      const id = `${input.kind}:${input.name}`;
      const known = inputs.get(id);
      if (known && known.default !== input.default) {
        throw new StartupError(
          `${input.kind} ${input.name} has the default "${known.default}" on one route and "${input.default}" on route "${route.path}"`,
        );
      }
      inputs.set(id, { ...input, values: new Set([...(known?.values ?? []), ...input.values]) });
    }
  }
  return [...inputs.values()];
}

/** A request's value of each input, normalized: a declared value, else the default. */
export function normalize(
  declared: RenderInputs,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string[] {
  let cookies: Map<string, string> | undefined;
  return declared.inputs.map((input) => {
    let value: string | undefined;
    if (input.kind === 'cookie') {
      cookies ??= firstCookies(headers['cookie']);
      value = cookies.get(input.name);
    } else {
      const raw = headers[input.name];
      // A repeated header is ambiguous: the default, never a variant of its own.
      value = typeof raw === 'string' ? raw.trim() : undefined;
    }
    return value !== undefined && input.values.has(value) ? value : input.default;
  });
}

/**
 * Each cookie's first value in a Cookie header (Node joins repeated headers with `; `): what a
 * browser sends first is the most specific one (RFC 6265 §5.4).
 */
export function firstCookies(header: string | string[] | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  const text = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const pair of text.split(';')) {
    const equals = pair.indexOf('=');
    if (equals === -1) {
      continue;
    }
    const name = pair.slice(0, equals).trim();
    if (!cookies.has(name)) {
      cookies.set(name, pair.slice(equals + 1).trim());
    }
  }
  return cookies;
}

/**
 * The normalized values as a cache key's suffix and back: one line per input, `cookie:name=value`
 * or `header:name=value`, in the declaration's order. Values never hold a line break.
 */
export function inputsText(declared: RenderInputs, values: readonly string[]): string {
  return declared.inputs.map((input, i) => `${input.kind}:${input.name}=${values[i]}`).join('\n');
}

/** A request's normalized inputs as inputsText spells them; '' for a route that declares none. */
export function declaredInputsText(
  declared: RenderInputs | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string {
  return declared === undefined ? '' : inputsText(declared, normalize(declared, headers));
}

/** The request headers a render sees for normalized inputs (inputsText's lines). */
export function inputHeaders(text: string): [string, string][] {
  const headers: [string, string][] = [];
  const cookies: string[] = [];
  for (const line of text === '' ? [] : text.split('\n')) {
    const colon = line.indexOf(':');
    const equals = line.indexOf('=', colon);
    const [kind, name, value] = [
      line.slice(0, colon),
      line.slice(colon + 1, equals),
      line.slice(equals + 1),
    ];
    if (kind === 'cookie') {
      cookies.push(`${name}=${value}`);
    } else {
      headers.push([name, value]);
    }
  }
  return cookies.length === 0 ? headers : [...headers, ['cookie', cookies.join('; ')]];
}
