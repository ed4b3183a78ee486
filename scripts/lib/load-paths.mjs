// The pages `npm run bench`, `npm run soak` and `npm run profile` load, read from load-paths.json
// at the root: paths of the app in src/, so the tools keep working when the app is replaced.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.mjs';

/** load-paths.json at the root, or the file LOAD_PATHS names (another app's pages, a test's). */
export const LOAD_PATHS_FILE = process.env['LOAD_PATHS'] || join(ROOT, 'load-paths.json');

/**
 * The page rendered per request: `path` with its one placeholder (`{id}`, `{slug}`…) filled in from
 * a numeric range (`ids`) or a list (`values`). `at(k)` is the k-th page of a rotation that visits
 * every value once before repeating; `valueAt(i)` the i-th value in order; `count` how many there are;
 * `label` says which, for reports (`ids 1..999999`, `3 values of {slug}`).
 * @typedef {{ path: string, count: number, label: string, status: number, cached: boolean,
 *   at: (k: number) => string, valueAt: (i: number) => string }} RenderedPages
 * @typedef {{ path: string, cookie: string, shows: (value: string) => string, showsText: string,
 *   cookieOf: (n: number) => { name: string, value: string },
 *   private: { path: string, shows: (value: string) => string, showsText: string } }} PersonalPages
 *   (a page with a personal part, for the browser bench; the cookie the part declares, what a
 *   visitor's own part shows for a value of it, a visitor's cookie by number, and a page private
 *   to the visitor, for the bench's ssr-personal)
 * @typedef {{ prerendered: string, rendered?: RenderedPages, data?: Omit<RenderedPages, 'status' | 'cached'>,
 *   personal?: PersonalPages, clientOnly?: string, notFound: string }} LoadPaths
 *   (data: pages whose render fetches the app's own API, the bench's ssr-data; the same shape as
 *   rendered's pages)
 */

class LoadPathsError extends Error {}

const isPath = (value) =>
  typeof value === 'string' &&
  value.startsWith('/') &&
  !value.startsWith('//') &&
  !/[\s?#]/.test(value);
/** `{id}`, `{slug}`: the part of a rendered path that changes from page to page. */
const PLACEHOLDER = /\{\w+\}/g;
const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));

/**
 * The k-th id of a rotation over [min, max] that visits every id once before repeating, in an
 * order no cache or branch predictor can anticipate from the previous one (a step coprime with the
 * count). For the demo's ids 1..999999 it is the bench's historical rotation.
 */
export function rotation(min, max) {
  const count = max - min + 1;
  let step = 7_919;
  while (gcd(step, count) !== 1) step += 1;
  return (k) => ((k * step + 12_345) % count) + min;
}

/**
 * Reads and checks load-paths.json; every error names the field.
 * @param {string} [file]
 * @returns {LoadPaths}
 */
export function readLoadPaths(file = LOAD_PATHS_FILE) {
  let raw;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new LoadPathsError(`${file}: ${error.message}`);
  }
  return parseLoadPaths(raw, file);
}

/**
 * The pages of a field that names a route and the values of its placeholder (`rendered`, `data`):
 * `at(k)` in a rotation that visits every value once before repeating.
 * @returns {Omit<RenderedPages, 'status' | 'cached'>}
 */
function pagesOf(r, field, fail) {
  const placeholders = typeof r.path === 'string' ? [...r.path.matchAll(PLACEHOLDER)] : [];
  if (!isPath(r.path) || placeholders.length !== 1)
    fail(
      `${field}.path`,
      'must be a path with one placeholder, e.g. "/products/{id}" or "/recipes/{slug}"',
    );
  const placeholder = placeholders[0][0];
  if ((r.ids === undefined) === (r.values === undefined))
    fail(field, `needs either "ids" (a numeric range) or "values" (a list) to fill ${placeholder}`);
  /** @type {string[] | undefined} */
  let list;
  let min = 0;
  if (r.ids !== undefined) {
    const ids = r.ids;
    if (
      !Array.isArray(ids) ||
      ids.length !== 2 ||
      !ids.every((id) => Number.isSafeInteger(id) && id >= 0) ||
      ids[0] > ids[1]
    ) {
      fail(`${field}.ids`, 'must be [first, last], whole numbers, first ≤ last');
    }
    min = ids[0];
  } else {
    const values = r.values;
    const valid = (value) =>
      (typeof value === 'string' && value !== '') || Number.isSafeInteger(value);
    if (!Array.isArray(values) || values.length === 0 || !values.every(valid))
      fail(
        `${field}.values`,
        'must be a list of strings or whole numbers, e.g. ["pancakes", "ramen"]',
      );
    list = values.map(String);
    if (new Set(list).size !== list.length) fail(`${field}.values`, 'must not repeat a value');
    const bad = list.find((value) => !isPath(r.path.replace(placeholder, () => value)));
    if (bad !== undefined)
      fail(`${field}.values`, `"${bad}" does not make a path (no spaces, ?, # or leading //)`);
  }
  const count = list ? list.length : r.ids[1] - r.ids[0] + 1;
  const valueAt = list ? (i) => list[i] : (i) => String(min + i);
  const next = rotation(0, count - 1);
  return {
    path: r.path,
    count,
    label: list
      ? `${count} value${count === 1 ? '' : 's'} of ${placeholder}`
      : `ids ${r.ids[0]}..${r.ids[1]}`,
    at: (k) => r.path.replace(placeholder, () => valueAt(next(k))),
    valueAt,
  };
}

/** @returns {LoadPaths} */
export function parseLoadPaths(raw, file = 'load-paths.json') {
  const fail = (field, why) => {
    throw new LoadPathsError(`${file}: "${field}" ${why}`);
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail('(top level)', 'must be an object');
  const known = [
    '$comment',
    'prerendered',
    'rendered',
    'data',
    'personal',
    'clientOnly',
    'notFound',
  ];
  for (const key of Object.keys(raw))
    if (!known.includes(key)) fail(key, `is not a field (known: ${known.slice(1).join(', ')})`);
  if (!isPath(raw.prerendered))
    fail('prerendered', 'must be a path such as "/" (a page the build prerenders)');
  if (raw.clientOnly !== undefined && !isPath(raw.clientOnly))
    fail('clientOnly', 'must be a path such as "/dashboard"');
  if (raw.notFound !== undefined && !isPath(raw.notFound))
    fail('notFound', 'must be a path no route matches');
  const paths = {
    prerendered: raw.prerendered,
    clientOnly: raw.clientOnly,
    notFound: raw.notFound ?? '/no-such-page',
  };
  if (raw.rendered !== undefined) {
    const r = raw.rendered;
    if (typeof r !== 'object' || r === null)
      fail('rendered', 'must be an object { "path", "ids" or "values", "status", "cached" }');
    const pages = pagesOf(r, 'rendered', fail);
    if (
      r.status !== undefined &&
      !(Number.isInteger(r.status) && r.status >= 200 && r.status <= 599)
    )
      fail('rendered.status', 'must be an HTTP status (default 200)');
    if (r.cached !== undefined && typeof r.cached !== 'boolean')
      fail('rendered.cached', 'must be true or false');
    paths.rendered = {
      ...pages,
      status: r.status ?? 200,
      cached: r.cached ?? false,
    };
  }
  if (raw.data !== undefined) {
    const d = raw.data;
    if (typeof d !== 'object' || d === null || Array.isArray(d))
      fail('data', 'must be an object { "path", "ids" or "values" }');
    for (const key of Object.keys(d))
      if (!['path', 'ids', 'values'].includes(key))
        fail(`data.${key}`, 'is not a field (known: path, ids, values)');
    paths.data = pagesOf(d, 'data', fail);
  }
  if (raw.personal !== undefined) paths.personal = personalOf(raw.personal, fail);
  return paths;
}

/** A cookie-name: an RFC 6265 token. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** `{value}` or `{value:N}` (its first N characters) in what a page shows for a visitor. */
const VALUE = /\{value(?::(\d+))?\}/g;

/** What a page shows for the cookie's value: `text` with `{value}` / `{value:N}` filled in. */
function showsOf(text, field, fail) {
  if (typeof text !== 'string' || ![...text.matchAll(VALUE)].length)
    fail(field, 'must be text with {value} or {value:N} (its first N characters) in it');
  return (value) =>
    text.replace(VALUE, (_, n) => (n === undefined ? value : value.slice(0, Number(n))));
}

/**
 * `personal`: the cookie a personal part of the rendered route's pages declares, what the part shows
 * a visitor for its value, and a page private to that visitor with what it shows (the bench's
 * ssr-personal). @returns {PersonalPages}
 */
function personalOf(p, fail) {
  const shape = '{ "path", "cookie", "shows", "private": { "path", "shows" } }';
  if (typeof p !== 'object' || p === null || Array.isArray(p))
    fail('personal', `must be an object ${shape}`);
  for (const key of Object.keys(p))
    if (!['path', 'cookie', 'shows', 'private'].includes(key))
      fail(`personal.${key}`, 'is not a field (known: path, cookie, shows, private)');
  if (!isPath(p.path)) fail('personal.path', 'must be a path such as "/products/7"');
  if (typeof p.cookie !== 'string' || !COOKIE_NAME.test(p.cookie))
    fail('personal.cookie', 'must be a cookie name, e.g. "sid"');
  const own = p.private;
  if (typeof own !== 'object' || own === null || Array.isArray(own))
    fail(
      'personal.private',
      'must be an object { "path", "shows" }: a page private to the visitor',
    );
  for (const key of Object.keys(own))
    if (!['path', 'shows'].includes(key))
      fail(`personal.private.${key}`, 'is not a field (known: path, shows)');
  if (!isPath(own.path)) fail('personal.private.path', 'must be a path such as "/account"');
  return {
    path: p.path,
    cookie: p.cookie,
    // A visitor of their own per number: a value any session format of letters, digits and `-` takes.
    cookieOf: (n) => ({ name: p.cookie, value: `b3nch-${n}` }),
    shows: showsOf(p.shows, 'personal.shows', fail),
    showsText: p.shows,
    private: {
      path: own.path,
      shows: showsOf(own.shows, 'personal.private.shows', fail),
      showsText: own.shows,
    },
  };
}

export { LoadPathsError };
