// Every relative link in the Markdown files resolves: to a file or folder that exists and, with a
// #fragment, to a heading of the Markdown file it names. The README sends readers to docs/, and
// docs/ to each other, so a moved section or renamed heading must not leave a dead link behind.
// In the template, the same holds in each app `ng new` makes (sections dropped by --bench=false
// and --demo=false take their links with them).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix, relative, sep } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const SKIPPED_DIRS = new Set([
  'node_modules',
  '.git',
  '.angular',
  'dist',
  'tmp',
  'profiles',
  'test-results',
  'results',
]);

/** The repository's Markdown files, relative to ROOT with `/` separators. */
function markdownFiles(dir = ROOT) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory())
      return SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('dist-')
        ? []
        : markdownFiles(full);
    return entry.name.endsWith('.md') ? [relative(ROOT, full).split(sep).join('/')] : [];
  });
}

/** The text outside fenced code blocks, where a `# x` line is a heading. */
function unfenced(text) {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside code, where a `[x](y)` is a link. */
function prose(text) {
  return unfenced(text).replace(/`[^`\n]*`/g, '');
}

/** Relative link targets (`path`, `path#fragment` or `#fragment`): no scheme, no absolute path. */
function relativeLinks(text) {
  const targets = [...prose(text).matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map(
    (match) => match[1],
  );
  return targets.filter(
    (target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/'),
  );
}

/** GitHub's anchors for a Markdown file's headings: lower case, punctuation gone, spaces to dashes. */
function anchors(text) {
  const seen = new Map();
  const result = new Set();
  for (const [, heading] of unfenced(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/**
 * The links of `files` (path → text) that do not resolve in a tree where `exists(path)` says
 * whether a file or folder is there, as `file: target (why)`.
 */
function deadLinks(files, read, exists) {
  const dead = [];
  for (const file of files) {
    for (const target of relativeLinks(read(file))) {
      const [path, fragment] = target.split('#', 2);
      const resolved =
        path === ''
          ? file
          : posix.normalize(posix.join(posix.dirname(file), decodeURI(path))).replace(/\/$/, '');
      if (resolved.startsWith('..') || !exists(resolved)) {
        dead.push(`${file}: ${target} (no ${resolved})`);
      } else if (
        fragment !== undefined &&
        resolved.endsWith('.md') &&
        !anchors(read(resolved)).has(fragment)
      ) {
        dead.push(`${file}: ${target} (no heading #${fragment} in ${resolved})`);
      }
    }
  }
  return dead;
}

describe('documentation links', () => {
  it('every relative link in the Markdown files resolves, fragments included', () => {
    const files = markdownFiles();
    assert.ok(files.includes('README.md'), 'finds the README');
    const dead = deadLinks(
      files,
      (file) => readFileSync(join(ROOT, file), 'utf8'),
      (path) => existsSync(join(ROOT, path)),
    );
    assert.deepEqual(dead, []);
  });

  it('finds a dead link and a missing heading (the check itself)', () => {
    const texts = new Map([
      [
        'README.md',
        '[ok](docs/a.md#two) [gone](docs/b.md) [no heading](docs/a.md#three) `[code](x.md)`\n```\n[fenced](y.md)\n```\n',
      ],
      [
        'docs/a.md',
        '# One\n\n## Two\n\n[up](../README.md) [web](https://example.com) [self](#one)\n',
      ],
    ]);
    const dead = deadLinks(
      [...texts.keys()],
      (file) => texts.get(file),
      (path) => texts.has(path) || path === 'docs',
    );
    assert.deepEqual(dead, [
      'README.md: docs/b.md (no docs/b.md)',
      'README.md: docs/a.md#three (no heading #three in docs/a.md)',
    ]);
  });

  const template = join(ROOT, 'schematics/template.cjs');
  it(
    'in each app ng new makes, every link a reader reaches from the README resolves',
    {
      skip:
        !existsSync(template) && 'no schematics/ here: this is an app, checked by the test above',
    },
    () => {
      const { scaffoldFiles } = createRequire(import.meta.url)(template);
      for (const options of [
        {},
        { bench: false },
        { demo: false },
        { bench: false, demo: false },
      ]) {
        const files = scaffoldFiles({ name: 'recipe-box', ...options });
        const read = (path) => files.get(path).toString('utf8');
        const exists = (path) =>
          files.has(path) || [...files.keys()].some((file) => file.startsWith(`${path}/`));
        // Follow the links from the README through the Markdown files they reach.
        const reached = ['README.md'];
        for (let i = 0; i < reached.length; i++) {
          for (const target of relativeLinks(read(reached[i]))) {
            const path = posix.normalize(
              posix.join(
                posix.dirname(reached[i]),
                target.split('#')[0] || posix.basename(reached[i]),
              ),
            );
            if (path.endsWith('.md') && files.has(path) && !reached.includes(path))
              reached.push(path);
          }
        }
        assert.ok(reached.includes('docs/your-app.md'), 'the README links to the guide');
        assert.deepEqual(deadLinks(reached, read, exists), [], JSON.stringify(options));
        const dropped = [
          'template',
          ...(options.bench === false ? ['bench'] : []),
          ...(options.demo === false ? ['demo'] : []),
        ];
        for (const path of reached) {
          for (const section of dropped)
            assert.ok(
              !read(path).includes(`section:${section}`),
              `${path} keeps no ${section} section`,
            );
        }
      }
    },
  );
});
