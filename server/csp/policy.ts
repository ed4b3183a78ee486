import { randomFillSync } from 'node:crypto';

/** `off`, the header enforced (`strict`), or sent as Content-Security-Policy-Report-Only. */
export type CspMode = 'off' | 'strict' | 'report-only';
export const CSP_MODES: readonly CspMode[] = ['off', 'strict', 'report-only'];

/** Directives by name, each with its sources, in the order they are sent. */
export type CspDirectives = Map<string, string[]>;

/** Where a response's nonce goes in the policy. */
const NONCE = "'nonce-'";

/**
 * The strict policy (a nonce and 'strict-dynamic': scripts the page's own scripts load run, nothing
 * injected does). `base-uri 'self'`, not 'none': Angular's index has `<base href="/">`. Style
 * elements also need the nonce, so an injected `<style>` cannot restyle the page either; style
 * attributes stay allowed, because Angular renders `[style]` bindings into them on the server.
 */
const STRICT: [string, string[]][] = [
  ['script-src', [NONCE, "'strict-dynamic'"]],
  ['style-src', ["'self'", NONCE]],
  ['style-src-attr', ["'unsafe-inline'"]],
  ['object-src', ["'none'"]],
  ['base-uri', ["'self'"]],
];

const DIRECTIVE_NAME = /^[a-z][a-z0-9-]*$/;
/** A source expression or a report target: visible ASCII, no `;` or `,` (which split policies). */
const SOURCE = /^[!-+\--:<-~]+$/;

/**
 * Parses `CSP_DIRECTIVES`: directives separated by `;`, e.g.
 * `connect-src https://api.example.com; img-src 'self' https://img.example.com; report-uri /csp`.
 * A directive the strict policy already has gets the extra sources added to its own. Throws a
 * message naming what is wrong.
 */
export function parseCspDirectives(text: string): CspDirectives {
  const directives: CspDirectives = new Map();
  for (const part of text.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name === '') {
      continue;
    }
    if (!DIRECTIVE_NAME.test(name.toLowerCase())) {
      throw new Error(`"${name}" is not a directive name`);
    }
    for (const source of sources) {
      if (!SOURCE.test(source) || source.toLowerCase().startsWith("'nonce-")) {
        throw new Error(`"${source}" is not a source the origin can send (in ${name})`);
      }
    }
    directives.set(name.toLowerCase(), [...(directives.get(name.toLowerCase()) ?? []), ...sources]);
  }
  return directives;
}

/** The policy's settings (CSP, CSP_DIRECTIVES, CSP_REPORT_TO). */
export interface CspSettings {
  /** The header enforced (`strict`), or sent as Content-Security-Policy-Report-Only. */
  mode: Exclude<CspMode, 'off'>;
  /** Directives added to the strict policy. */
  directives: CspDirectives;
  /** Where browsers send reports through the Reporting API; undefined for none. */
  reportTo: string | undefined;
}

/** The name CSP_REPORT_TO's URL gets in Reporting-Endpoints, which the policy's report-to names. */
const REPORT_ENDPOINT = 'csp-endpoint';

/**
 * CSP_REPORT_TO: where browsers send reports through the Reporting API. An absolute http(s) URL or
 * a path of this origin; nothing that could break out of the header's quoted string. Throws a
 * message naming what is wrong.
 */
export function parseReportTo(value: string): string {
  if (!/^(?:https?:\/\/[^\s"\\,;]+|\/[^\s"\\,;]*)$/.test(value)) {
    throw new Error(
      'must be an http(s) URL or a path starting with /, without quotes, commas or spaces',
    );
  }
  if (value.startsWith('http') && !URL.canParse(value)) {
    throw new Error('is not a URL');
  }
  return value;
}

/** Bytes of randomness in a nonce: 128 bits, the CSP specification's minimum. */
const NONCE_BYTES = 16;
/** A nonce as sent: 22 base64url characters. The placeholder has the same length, so a splice keeps every offset. */
export const NONCE_LENGTH = 22;

/** Random bytes drawn in batches, one randomFillSync per 256 nonces (docs/architecture.md#what-each-optimization-saves); never reused. */
const pool = Buffer.alloc(NONCE_BYTES * 256);
let drawn = pool.length;

export function freshNonce(): string {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  drawn += NONCE_BYTES;
  return pool.toString('base64url', drawn - NONCE_BYTES, drawn);
}

/**
 * The policy an HTML answer is sent with, and the placeholder that stands for its nonce in stored
 * pages. The placeholder is random per process: a page cannot carry it unless the origin or
 * Angular (through the nonce the origin gives it) put it there.
 */
export class ContentSecurityPolicy {
  readonly headerName: string;
  /**
   * Headers sent with the policy on every HTML answer, flat: `Reporting-Endpoints` when reports go
   * to a `report-to` endpoint (the Reporting API needs the header to know where that is).
   */
  readonly #extraHeaders: string[] = [];
  readonly placeholder = freshNonce();
  /** The header split where the nonce goes: parts.join(nonce) is the header for that nonce. */
  readonly #parts: string[];

  constructor({ mode, directives: extra, reportTo }: CspSettings) {
    this.headerName =
      mode === 'strict' ? 'Content-Security-Policy' : 'Content-Security-Policy-Report-Only';
    const directives = new Map(STRICT.map(([name, sources]) => [name, [...sources]]));
    for (const [name, sources] of extra) {
      directives.set(name, [...(directives.get(name) ?? []), ...sources]);
    }
    if (reportTo !== undefined) {
      directives.set('report-to', [REPORT_ENDPOINT]);
      this.#extraHeaders.push('Reporting-Endpoints', `${REPORT_ENDPOINT}="${reportTo}"`);
    }
    const text = [...directives]
      .map(([name, sources]) => [name, ...sources].join(' '))
      .join('; ')
      .replaceAll(NONCE, "'nonce-\0'");
    this.#parts = text.split('\0');
  }

  /** The header's value for one response's nonce. */
  value(nonce: string): string {
    return this.#parts.join(nonce);
  }

  /** Every header an HTML answer with this nonce carries for the policy, flat (name, value, …). */
  headers(nonce: string): string[] {
    return [this.headerName, this.value(nonce), ...this.#extraHeaders];
  }
}
