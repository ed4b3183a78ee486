import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compileSheet } from 'beasties/compiler';
import { createProcessor } from 'beasties/runtime';

/**
 * Inlines the critical CSS of a rendered page from stylesheets compiled once at startup, as
 * Angular 22.2's own engine does with the plans its build writes. CommonEngine's default runs a
 * full Beasties pass (parse the page, parse every stylesheet, match selectors) on every request.
 * Options mirror CommonEngine's Beasties settings so the output is the same (tested).
 */
export function createCriticalCss(browserDir: string): (html: string) => string {
  const sheets = readdirSync(browserDir)
    .filter((name) => name.endsWith('.css'))
    .map((name) => compileSheet(readFileSync(join(browserDir, name), 'utf8'), { href: name }));
  const { process } = createProcessor(sheets, {
    preload: 'media-script',
    noscriptFallback: true,
    inlineFonts: true,
    preloadFonts: true,
    cache: true,
    logger: { warn: (message) => console.warn(message) },
  });
  return process;
}
