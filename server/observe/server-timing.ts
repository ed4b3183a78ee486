import type { Exchange, RequestObserver } from './exchange.ts';

/**
 * Server-Timing (SERVER_TIMING=1): what the browser's DevTools and
 * `performance.getEntriesByType('navigation')[0].serverTiming` show of the server's part of a
 * page — how the render cache answered, the wait for a render slot, the render, the time it waited
 * on its APIs (and how the data cache answered them), and the whole of it to the head. Off by
 * default: it tells any visitor how the server spends its time and how warm its caches are.
 */
export const serverTiming: RequestObserver = {
  headers(exchange: Exchange): readonly string[] {
    const metrics: string[] = [];
    if (exchange.cache !== undefined) {
      metrics.push(`cache;desc=${exchange.cache}`);
    }
    const { render } = exchange;
    if (render !== undefined) {
      metrics.push(`queue;dur=${ms(render.queueMs)}`, `render;dur=${ms(render.renderMs)}`);
      if (render.fetches !== '') {
        metrics.push(`data;dur=${ms(render.dataMs)};desc="${render.fetches}"`);
      }
    }
    metrics.push(`total;dur=${ms(performance.now() - exchange.startMs)}`);
    return ['Server-Timing', metrics.join(', ')];
  },
};

/** Milliseconds to a tenth of one: what DevTools shows. */
function ms(value: number): string {
  return value.toFixed(1);
}
