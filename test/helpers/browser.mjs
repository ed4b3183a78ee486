// The browser tests' Chromium: the one the tools share (scripts/lib/chromium.mjs).
export { CHROMIUM, launchBrowser } from '../../scripts/lib/chromium.mjs';
