// Server-Timing (SERVER_TIMING=1): what the browser's DevTools and
// `performance.getEntriesByType('navigation')[0].serverTiming` show of the server's part of a
// page — how the render cache answered, the wait for a render slot, the render, the time it waited
// on its APIs (and how the data cache answered them), and the whole of it to the head. Off by
// default: it tells any visitor how the server spends its time and how warm its caches are.
import type { ServerResponse } from 'node:http';
import {
  type AnswerMessage,
  channels,
  follow,
  type PageServedMessage,
  type PartServedMessage,
  type RenderTiming,
  type RequestMessage,
} from '../channels.ts';

/** What Server-Timing keeps of a request until its head goes out. */
interface Seen {
  startMs: number;
  cache?: string;
  render?: RenderTiming;
  /** Each personal part as served: `greeting hit`. */
  parts?: string[];
}

/** Subscribes Server-Timing: every answer's head gets the header. Returns what undoes it. */
export function timeAnswers(): () => void {
  const seen = new WeakMap<ServerResponse, Seen>();
  const request = {
    start: ({ res }: RequestMessage) => {
      follow(res);
      seen.set(res, { startMs: performance.now() });
    },
  };
  const served = (message: unknown) => {
    const { res, cache, render } = message as PageServedMessage;
    const it = seen.get(res);
    if (it !== undefined) {
      it.cache = cache;
      it.render = render;
    }
  };
  const part = (message: unknown) => {
    const { res, part: name, outcome } = message as PartServedMessage;
    const it = seen.get(res);
    if (it !== undefined) {
      (it.parts ??= []).push(`${name} ${outcome}`);
    }
  };
  const answer = (message: unknown) => {
    const { res, headers } = message as AnswerMessage;
    const it = seen.get(res);
    if (it !== undefined) {
      headers.push('Server-Timing', metricsOf(it));
    }
  };
  channels.request.subscribe(request as never);
  channels.pageServed.subscribe(served);
  channels.answer.subscribe(answer);
  channels.partServed.subscribe(part);
  return () => {
    channels.partServed.unsubscribe(part);
    channels.request.unsubscribe(request as never);
    channels.pageServed.unsubscribe(served);
    channels.answer.unsubscribe(answer);
  };
}

function metricsOf({ startMs, cache, render, parts }: Seen): string {
  const metrics: string[] = [];
  if (cache !== undefined) {
    metrics.push(`cache;desc=${cache}`);
  }
  // The personal parts known as the head goes out (kept for the visitor, or anonymous): one that
  // renders after it is in the trace and the metrics.
  for (const part of parts ?? []) {
    metrics.push(`part;desc="${part}"`);
  }
  if (render !== undefined) {
    metrics.push(`queue;dur=${ms(render.queueMs)}`, `render;dur=${ms(render.renderMs)}`);
    if (render.fetches !== '') {
      metrics.push(`data;dur=${ms(render.dataMs)};desc="${render.fetches}"`);
    }
  }
  metrics.push(`total;dur=${ms(performance.now() - startMs)}`);
  return metrics.join(', ');
}

/** Milliseconds to a tenth of one: what DevTools shows. */
function ms(value: number): string {
  return value.toFixed(1);
}
