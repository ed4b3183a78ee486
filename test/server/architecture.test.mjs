// The shape of server/ that docs/architecture.md describes, checked from the code itself: its
// folders' imports run one way, one file writes the public port's answers, Cache-Status is spelled
// in one place, and the revalidation mode is declared once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/origin.mjs';

const SERVER = join(ROOT, 'server');

/**
 * The rooms of server/ in the order docs/architecture.md lists them ("Where the code lives"), from
 * the top down: imports run down this list.
 */
const DOCUMENTED_ORDER = (() => {
  const docs = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Where the code lives'));
  const block = section.slice(
    section.indexOf('```') + 3,
    section.indexOf('```', section.indexOf('```') + 3),
  );
  return [...block.matchAll(/^ {2}(\S+)\s/gm)].map(([, name]) => name.replace(/\/$/, ''));
})();

/** Every TypeScript file of server/, by its path under server/ ('pages/pages.ts'). */
const files = new Map(
  readdirSync(SERVER, { recursive: true })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [name.split(sep).join('/'), readFileSync(join(SERVER, name), 'utf8')]),
);

/** A file's room: its folder under server/, or the file itself when it sits at the top. */
const room = (path) => (path.includes('/') ? path.slice(0, path.indexOf('/')) : path);

/** The server/ files a file imports (static imports and re-exports, type-only ones included). */
function importsOf(path, text) {
  const targets = [];
  for (const [, specifier] of text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
    const target = relative(SERVER, join(SERVER, dirname(path), specifier))
      .split(sep)
      .join('/');
    if (files.has(target)) {
      targets.push(target);
    }
  }
  return targets;
}

describe('the shape of server/', () => {
  it('reads every import it checks', () => {
    // A guard on the scan itself: the pages step must be seen importing the render cache.
    assert.ok(
      importsOf('pages/pages.ts', files.get('pages/pages.ts')).includes(
        'render-cache/page-cache.ts',
      ),
    );
  });

  it("folders' imports run one way: no two rooms import each other, directly or round a circle", () => {
    const edges = new Map();
    for (const [path, text] of files) {
      for (const target of importsOf(path, text)) {
        const [from, to] = [room(path), room(target)];
        if (from !== to) {
          if (!edges.has(from)) edges.set(from, new Map());
          edges.get(from).set(to, `${path} → ${target}`);
        }
      }
    }
    // Depth-first search for a circle; the first one found is named with the imports that make it.
    const state = new Map();
    const visit = (node, trail) => {
      state.set(node, 'open');
      for (const [next, via] of edges.get(node) ?? []) {
        if (state.get(next) === 'open') {
          const start = trail.findIndex((step) => step.from === next);
          const circle = [...trail.slice(start), { from: node, via }].map((step) => step.via);
          assert.fail(`imports run back up:\n  ${circle.filter(Boolean).join('\n  ')}`);
        }
        if (!state.has(next)) visit(next, [...trail, { from: node, via }]);
      }
      state.set(node, 'done');
    };
    for (const node of edges.keys()) {
      if (!state.has(node)) visit(node, [{ from: node, via: undefined }]);
    }
  });

  it('imports run down the order docs/architecture.md lists the rooms in, and it lists every room', () => {
    assert.ok(DOCUMENTED_ORDER.length > 10, `read ${DOCUMENTED_ORDER} from the docs`);
    const rooms = new Set([...files.keys()].map(room));
    const unlisted = [...rooms].filter((name) => !DOCUMENTED_ORDER.includes(name));
    assert.deepEqual(unlisted, [], 'rooms of server/ the docs do not list');
    const upward = [];
    for (const [path, text] of files) {
      for (const target of importsOf(path, text)) {
        const [from, to] = [room(path), room(target)];
        if (from !== to && DOCUMENTED_ORDER.indexOf(from) > DOCUMENTED_ORDER.indexOf(to)) {
          upward.push(`${path} → ${target}`);
        }
      }
    }
    assert.deepEqual(upward, [], 'imports that run back up the documented order');
  });

  it('no step imports an observer: steps publish on channels.ts, the wiring subscribes', () => {
    // The observers: the traces, the metrics, the access log, Server-Timing, the error counts
    // (observe/requests.ts is the one publisher there: it tells every request on channels.ts).
    const observer = (path) =>
      /^(?:observe\/|metrics\/)/.test(path) && path !== 'observe/requests.ts';
    // What subscribes them (server.ts, parts.ts) and reads their settings (config.ts).
    const wiring = new Set(['server.ts', 'parts.ts', 'config.ts']);
    assert.ok([...files.keys()].filter(observer).length >= 10, 'the observers are found');
    const offenders = [];
    for (const [path, text] of files) {
      if (observer(path) || wiring.has(path)) continue;
      for (const target of importsOf(path, text)) {
        if (observer(target)) offenders.push(`${path} → ${target}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('one file writes the answers of the public port (the metrics port has its own server)', () => {
    const writers = [...files]
      .filter(([, text]) => /\bres\.(?:writeHead|write|end|flushHeaders)\(/.test(text))
      .map(([path]) => path)
      .sort();
    assert.deepEqual(writers, ['http/answer.ts', 'metrics/metrics-server.ts']);
  });

  it('spells Cache-Status in one file, and declares the revalidation mode once', () => {
    const spelling = (pattern) =>
      [...files].filter(([, text]) => pattern.test(text)).map(([path]) => path);
    assert.deepEqual(spelling(/'Cache-Status'|['`]render-cache;|['`]shared-cache;/), [
      'cache/cache-status.ts',
    ]);
    assert.deepEqual(spelling(/'soft'\s*\|\s*'hard'/), ['cache/revalidation.ts']);
  });
});
