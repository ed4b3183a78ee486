// Which Node the origin runs on, against the range Angular declares (`engines.node` of the installed
// @angular/core, e.g. `^22.22.3 || ^24.15.0 || >=26.0.0`). A process started by hand or by an image
// (`node dist/server/server.mjs`) runs on whatever Node is there; Angular does not check it at run
// time, so the origin says so in one line at startup. Node ships no range parser and the origin
// carries no semver package: this reads the forms npm ranges use, and nothing it cannot read warns.
import { createRequire } from 'node:module';

type Version = readonly [number, number, number];
/** One comparator: the version must be at least `min` (inclusive) and below `below` (exclusive). */
interface Bounds {
  min: Version;
  below: Version | undefined;
  exact?: boolean;
}

const ZERO: Version = [0, 0, 0];
const PART = String.raw`(\d+|[xX*])`;
const COMPARATOR = new RegExp(
  String.raw`^(\^|~|>=|<=|>|<|=)?v?${PART}(?:\.${PART})?(?:\.${PART})?(?:-[\w.]+)?$`,
);

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** `v24.21.0` → [24, 21, 0] (a pre-release tag is ignored); undefined for anything else. */
export function parseVersion(text: string): Version | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** The bounds of one comparator (`^22.22.3`, `>=26`, `24.x`), or undefined when it is not one. */
function boundsOf(comparator: string): Bounds | undefined {
  const match = COMPARATOR.exec(comparator);
  if (!match) {
    return undefined;
  }
  const operator = match[1] ?? '';
  // The given parts as numbers, up to the first wildcard or missing one.
  const given: number[] = [];
  for (const part of match.slice(2, 5)) {
    if (part === undefined || /^[xX*]$/.test(part)) break;
    given.push(Number(part));
  }
  if (given.length === 0) {
    // `*`, `x`, `>=x`: any version.
    return operator === '<'
      ? { min: [Infinity, 0, 0], below: undefined }
      : { min: ZERO, below: undefined };
  }
  const low: Version = [given[0], given[1] ?? 0, given[2] ?? 0];
  /** The first version past every version the given parts name (`24.1` → 24.2.0). */
  const next = (count: number): Version =>
    count === 1
      ? [low[0] + 1, 0, 0]
      : count === 2
        ? [low[0], low[1] + 1, 0]
        : [low[0], low[1], low[2] + 1];
  switch (operator) {
    case '^': {
      // Up to the next change of the first non-zero part the range gives (npm's caret).
      const significant =
        low[0] > 0 || given.length < 2 ? 1 : low[1] > 0 || given.length < 3 ? 2 : 3;
      return { min: low, below: next(significant) };
    }
    case '~':
      return { min: low, below: next(given.length >= 2 ? 2 : given.length) };
    case '>=':
      return { min: low, below: undefined };
    case '>':
      return { min: next(given.length), below: undefined };
    case '<':
      return { min: ZERO, below: low };
    case '<=':
      return { min: ZERO, below: next(given.length) };
    default:
      // `24.21.0` is that version; `24`, `24.x`, `*` every version they leave open.
      return given.length === 3
        ? { min: low, below: undefined, exact: true }
        : { min: low, below: next(given.length) };
  }
}

function within(version: Version, bounds: Bounds): boolean {
  if (bounds.exact) {
    return compare(version, bounds.min) === 0;
  }
  return (
    compare(version, bounds.min) >= 0 &&
    (bounds.below === undefined || compare(version, bounds.below) < 0)
  );
}

/**
 * Whether `version` (`v20.20.2`) is in `range` (npm's syntax: `||` between alternatives, each a
 * space-separated list of comparators `^x.y.z`, `~x.y`, `>=x`, `<x.y.z`, `x.y.z`, `x.x`); undefined
 * when either cannot be read (a hyphen range, a tag), so that nothing is claimed.
 */
export function nodeSatisfies(version: string, range: string): boolean | undefined {
  const parsed = parseVersion(version);
  if (!parsed) {
    return undefined;
  }
  let satisfied = false;
  for (const alternative of range.split('||')) {
    const comparators = alternative
      .trim()
      .replace(/(\^|~|>=|<=|>|<|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    const bounds: Bounds[] = comparators.length === 0 ? [{ min: ZERO, below: undefined }] : [];
    for (const comparator of comparators) {
      const one = boundsOf(comparator);
      if (!one) {
        return undefined;
      }
      bounds.push(one);
    }
    if (bounds.every((one) => within(parsed, one))) {
      satisfied = true;
    }
  }
  return satisfied;
}

/** The Node range the installed @angular/core declares, and its version; undefined if not found. */
export function angularNodeRange(): { range: string; angular: string } | undefined {
  try {
    const pkg = createRequire(import.meta.url)('@angular/core/package.json') as {
      version?: string;
      engines?: { node?: string };
    };
    const range = pkg.engines?.node;
    return range ? { range, angular: pkg.version ?? '' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The line to log when this process's Node is outside Angular's range, or undefined when it is in
 * it (or either cannot be read).
 */
export function nodeRangeWarning(
  version = process.version,
  declared = angularNodeRange(),
): string | undefined {
  if (!declared || nodeSatisfies(version, declared.range) !== false) {
    return undefined;
  }
  return (
    `Node ${version} is outside the range Angular ${declared.angular} declares (${declared.range}, ` +
    "@angular/core's engines.node): the origin and the app may fail in ways nothing here tests. " +
    'Run it on a Node in that range (npm scripts run on the Node of the `node` dev dependency).'
  );
}
