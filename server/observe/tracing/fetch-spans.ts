// The fetches the data cache does not own — a CDN purge, a fetch the app's server code makes
// itself — as CLIENT spans, from undici's diagnostics channels (Node's fetch is undici). A fetch
// through the data cache already has its span and its traceparent: it is left alone here, so no
// request is traced twice. Only a fetch made inside a traced piece of work gets a span: a
// fetch with no trace around it (or the exporter's own, which suppresses tracing) makes none.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  type Context,
  propagation,
  type Span,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import type { ChannelContextManager } from './channel-context.ts';
import { failed, fetchSpan } from './spans.ts';

/** What undici's channels say of a request (docs/api/DiagnosticsChannel.md in undici). */
interface UndiciRequest {
  origin: string | URL;
  method: string;
  path: string;
  /** Names and values, one after the other. */
  headers: string[] | string;
  addHeader(name: string, value: string): unknown;
}

interface Message {
  request: UndiciRequest;
  response?: { statusCode: number };
  error?: unknown;
}

/** Subscribes to undici's request channels; returns what undoes it. */
export function traceFetches(tracer: Tracer, manager: ChannelContextManager): () => void {
  const spans = new WeakMap<UndiciRequest, Span>();

  const create = (message: unknown) => {
    const { request } = message as Message;
    const parent = manager.active();
    if (
      trace.getSpan(parent) === undefined ||
      isTracingSuppressed(parent) ||
      carriesTraceparent(request.headers)
    ) {
      return;
    }
    const span = startSpan(tracer, request, parent);
    if (span === undefined) return;
    spans.set(request, span);
    propagation.inject(trace.setSpan(parent, span), request, {
      set: (carrier, name, value) => carrier.addHeader(name, value),
    });
  };
  const headers = (message: unknown) => {
    const { request, response } = message as Message;
    const span = spans.get(request);
    if (span === undefined || response === undefined) return;
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) {
      span.setAttribute('error.type', String(response.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  };
  // The body has been read (trailers come after it, even when there are none), or the request failed.
  const end = (message: unknown) => {
    const { request, error } = message as Message;
    const span = spans.get(request);
    if (span === undefined) return;
    spans.delete(request);
    if (error !== undefined) failed(span, error);
    span.end();
  };

  const subscribed: [string, (message: unknown) => void][] = [
    ['undici:request:create', create],
    ['undici:request:headers', headers],
    ['undici:request:trailers', end],
    ['undici:request:error', end],
  ];
  for (const [name, listener] of subscribed) subscribe(name, listener);
  return () => {
    for (const [name, listener] of subscribed) unsubscribe(name, listener);
  };
}

/** A CLIENT span named as the data cache's fetches are; none for a target that is not a URL. */
function startSpan(tracer: Tracer, request: UndiciRequest, parent: Context): Span | undefined {
  let url: URL;
  try {
    url = new URL(request.path, request.origin);
  } catch {
    return undefined;
  }
  const { name, kind, attributes } = fetchSpan(request.method, url);
  return tracer.startSpan(name, { kind, attributes }, parent);
}

/** Whether a request already carries a trace context: the data cache's, with a span of its own. */
function carriesTraceparent(headers: string[] | string): boolean {
  if (typeof headers === 'string') return /^traceparent:/im.test(headers);
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i].toLowerCase() === 'traceparent') return true;
  }
  return false;
}
