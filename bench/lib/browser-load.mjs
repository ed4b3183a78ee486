// One cold page load in Chromium as a visitor on a phone network makes it: a fresh browser context
// (nothing cached, no connection open), the network Lighthouse emulates for mobile (150 ms latency,
// 1.6 Mbit/s down, 750 kbit/s up) through CDP, and what the page cost and when it became usable.
// observePage and the functions given to page.evaluate run in the page, with the browser's globals:
/* global window, document, MutationObserver, requestAnimationFrame */

/** Lighthouse's mobile network ("slow 4G"), as CDP's Network.emulateNetworkConditions takes it. */
export const MOBILE_NETWORK = {
  offline: false,
  latency: 150,
  downloadThroughput: 200_000,
  uploadThroughput: 93_750,
};

/**
 * Installed before the page's first byte: the moment the last `ngh` attribute (Angular's hydration
 * marker) is removed, i.e. the page is hydrated, and the largest contentful paint so far.
 */
function observePage() {
  const state = { seen: false, hydrated: undefined, lcp: undefined };
  Object.defineProperty(window, '__load', { value: state });
  const check = () => {
    const marked = document.querySelector('[ngh]') !== null;
    if (marked) state.seen = true;
    else if (state.seen && state.hydrated === undefined) state.hydrated = performance.now();
  };
  new MutationObserver(check).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['ngh'],
  });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) state.lcp = entry.startTime;
  }).observe({ type: 'largest-contentful-paint', buffered: true });
}

/**
 * Loads `url` once, cold. Returns bytes received (headers and bodies as they came over the wire,
 * every request of the load), first and largest contentful paint and hydration in ms from the
 * navigation's start, the protocol, and how many files the page fetched because of a 103.
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {{ timeoutMs?: number }} [options]
 */
export async function coldLoad(browser, url, { timeoutMs = 60_000 } = {}) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', MOBILE_NETWORK);
    let bytes = 0;
    cdp.on('Network.loadingFinished', ({ encodedDataLength }) => (bytes += encodedDataLength));
    await page.addInitScript(observePage);
    await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
    await page.waitForFunction(() => window.__load.hydrated !== undefined, null, {
      timeout: timeoutMs,
    });
    // The largest paint is final once the page is hydrated and the next frame painted.
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50))),
    );
    const seen = await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType('navigation');
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime;
      return {
        fcp,
        lcp: window.__load.lcp,
        hydrated: window.__load.hydrated,
        protocol: navigation.nextHopProtocol,
        earlyHints: performance
          .getEntriesByType('resource')
          .filter((entry) => entry.initiatorType === 'early-hints').length,
      };
    });
    return { bytes, ...seen };
  } finally {
    await context.close();
  }
}
