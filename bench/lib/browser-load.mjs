// One cold page load in Chromium as a visitor on a phone network makes it: a fresh browser context
// (nothing cached, no connection open), the network Lighthouse emulates for mobile (150 ms latency,
// 1.6 Mbit/s down, 750 kbit/s up) through CDP, and what the page cost and when it became usable.
// observePage and the functions given to page.evaluate run in the page, with the browser's globals:
/* global window, document, MutationObserver, requestAnimationFrame, Node */
import { request } from '../../scripts/lib/http.mjs';

/** Lighthouse's mobile network ("slow 4G"), as CDP's Network.emulateNetworkConditions takes it. */
export const MOBILE_NETWORK = {
  offline: false,
  latency: 150,
  downloadThroughput: 200_000,
  uploadThroughput: 93_750,
};

/**
 * Installed before the page's first byte: the moment the last `ngh` attribute (Angular's hydration
 * marker) is removed, i.e. the page is hydrated, and the largest contentful paint so far. With
 * `shows` (a text a personal part shows the visitor), when that text is first painted inside a
 * `<personal-part>`: each element put into a part whose own text holds it is marked for Element
 * Timing as it enters the document (the observer runs before the next paint), and the browser
 * reports when it painted the mark, on the clock of the largest contentful paint.
 * @param {string | null} shows
 */
function observePage(shows) {
  const state = {
    seen: false,
    hydrated: undefined,
    lcp: undefined,
    part: undefined,
    partAfterHydration: undefined,
  };
  Object.defineProperty(window, '__load', { value: state });
  const markPart = (records) => {
    for (const { addedNodes } of records) {
      for (const node of addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        for (const element of [node, ...node.querySelectorAll('*')]) {
          const own = Array.from(element.childNodes, (child) =>
            child.nodeType === Node.TEXT_NODE ? child.data : '',
          ).join('');
          if (own.includes(shows) && element.closest('personal-part')) {
            element.setAttribute('elementtiming', 'personal-part');
            // Where the text came from, whatever the paint times: the HTML as the parser met it
            // (the page not hydrated yet), or the app once it ran.
            state.partAfterHydration ??= state.hydrated !== undefined;
          }
        }
      }
    }
  };
  const check = (records) => {
    const marked = document.querySelector('[ngh]') !== null;
    if (marked) state.seen = true;
    else if (state.seen && state.hydrated === undefined) state.hydrated = performance.now();
    if (shows !== null) markPart(records);
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
  if (shows !== null) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (entry.identifier === 'personal-part' && state.part === undefined)
          state.part = entry.renderTime || entry.startTime;
      }
    }).observe({ type: 'element', buffered: true });
  }
}

/**
 * The bytes a server sends for `url`, asked with the encodings Chromium accepts: its body as sent
 * (compressed) and its headers (names and values, uncompressed: HPACK sends fewer).
 * @param {string} url
 */
async function sentBytes(url) {
  const { origin, pathname, search } = new URL(url);
  const answer = await request(origin, pathname + search, {
    headers: { 'accept-encoding': 'gzip, deflate, br, zstd' },
  });
  let head = 0;
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!name.startsWith(':')) head += name.length + String(value).length + 4;
  }
  return answer.body.length + head;
}

/**
 * Loads `url` once, cold. Returns bytes received (headers and bodies as they came over the wire,
 * every request of the load; a file a 103 fetched as its server sends it, see sentBytes), first and largest contentful paint and hydration in ms from the
 * navigation's start, the protocol, and how many files the page fetched because of a 103.
 * With `visitor`, a signed-in visitor's load: their cookie, and when their personal part was first
 * painted showing them `shows` (`part`, in ms too) and whether its text entered the document after the
 * page was hydrated (`partAfterHydration`: made by the app), and whether the HTML held it
 * (`partInHtml`). The cookie is in the browser's jar before the
 * load (`by: 'request'`: the page's request carries it, the origin fills the part), or set by a
 * script at the document's start (`by: 'script'`: the page's request carries none and gets the
 * shared page with its placeholder; the part is made in the browser, its data fetched after
 * hydration, as a part added in the browser only is).
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {{ timeoutMs?: number, visitor?: { cookie: { name: string, value: string }, by: 'request' | 'script', shows: string } }} [options]
 */
export async function coldLoad(browser, url, { timeoutMs = 60_000, visitor } = {}) {
  const context = await browser.newContext();
  try {
    if (visitor?.by === 'request') {
      await context.addCookies([{ ...visitor.cookie, url: new URL(url).origin }]);
    }
    const page = await context.newPage();
    if (visitor?.by === 'script') {
      await page.addInitScript(({ name, value }) => {
        document.cookie = `${name}=${value}; path=/; samesite=lax`;
      }, visitor.cookie);
    }
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', MOBILE_NETWORK);
    let bytes = 0;
    /** The URLs whose bytes the protocol reported. */
    const counted = new Set();
    const urls = new Map();
    cdp.on('Network.responseReceived', ({ requestId, response }) =>
      urls.set(requestId, response.url),
    );
    cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
      bytes += encodedDataLength;
      if (encodedDataLength > 0) counted.add(urls.get(requestId));
    });
    await page.addInitScript(observePage, visitor?.shows ?? null);
    const document = await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
    // Whether the HTML as it came held the visitor's part: an origin sends the part's placeholder
    // instead when the part ran out of time (its timeoutMs), and the app then makes it.
    const partInHtml = visitor && (await document?.text())?.includes(visitor.shows);
    await page.waitForFunction(
      (part) => window.__load.hydrated !== undefined && (!part || window.__load.part !== undefined),
      visitor !== undefined,
      { timeout: timeoutMs },
    );
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
        part: window.__load.part,
        partAfterHydration: window.__load.partAfterHydration,
        protocol: navigation.nextHopProtocol,
        hinted: performance
          .getEntriesByType('resource')
          .filter((entry) => entry.initiatorType === 'early-hints')
          .map((entry) => entry.name),
      };
    });
    // What a 103 made the browser fetch, Chromium reports as 0 bytes, to the protocol and to
    // Resource Timing alike (a signed-in load counted 14 kB where its scripts weigh over 100): such
    // a file counts as the server sends it again, asked as the browser asked it (unless the
    // protocol counted it after all).
    const { hinted, ...shown } = seen;
    for (const url of hinted) {
      if (!counted.has(url)) bytes += await sentBytes(url);
    }
    return {
      bytes,
      ...shown,
      earlyHints: hinted.length,
      ...(visitor && { partInHtml: partInHtml === true }),
    };
  } finally {
    await context.close();
  }
}
