// What tracing adds to each response, in CPU time, where the end-to-end bench's spread is wider
// than the difference: the request channel (server/observe/requests.ts) with the tracing module's
// subscribers (server/observe/tracing/spans.ts) and a real tracer provider (the SDK, its sampler,
// a batch processor, the OTLP/HTTP protobuf exporter to a collector in a process of its own), on
// 200,000 simulated responses
// named as the fast path names a prerendered page, against the same listener with nobody
// subscribed (what the origin runs by default). `ratio` is OTEL_TRACES_SAMPLER_ARG of
// parentbased_traceidratio: 0, a request the sampler leaves out; 0.1, the manifests' one in ten;
// 1, every request.
// Run: node bench/tracing-cost.mjs (Node 24 strips the types of the .ts it imports).
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { channels, followed, nameRequest } from '../server/channels.ts';
import { observedRequests } from '../server/observe/requests.ts';
import { ChannelContextManager } from '../server/observe/tracing/channel-context.ts';
import { RequestIds } from '../server/observe/tracing/request-span.ts';
import { samplersOf } from '../server/observe/tracing/samplers.ts';
import { traceChannels } from '../server/observe/tracing/spans.ts';

const RESPONSES = 200_000;
const ROUNDS = 5;
const RATIOS = [0, 0.1, 1];

// The collector: a process of its own that takes every export (its CPU is not the origin's).
const sink = spawn(
  process.execPath,
  [
    '-e',
    "const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>r.end())}).listen(0,'127.0.0.1',()=>console.log(s.address().port))",
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const [port] = await once(sink.stdout, 'data');
const url = `http://127.0.0.1:${String(port).trim()}/v1/traces`;

/** The fast path: names its request as it names a prerendered page, and finishes. */
const answer = (req, res) => {
  if (channels.route.hasSubscribers && followed(res)) {
    nameRequest({ res, route: '/', mode: 'prerendered', entrance: 'fast-path' });
  }
  res.writableFinished = true;
  res.emit('close');
};
const listener = observedRequests(
  () => {
    throw new Error('answered from memory, never by the chain');
  },
  () => undefined,
  (req, res) => {
    answer(req, res);
    return true;
  },
);

/** Subscribes tracing at `ratio`; returns what exports what it holds, and what undoes it. */
function traced(ratio) {
  const { sampler, root } = samplersOf({
    sampler: 'parentbased_traceidratio',
    ratio,
    trust: 'ignore',
  });
  const ids = new RequestIds();
  const exporter = new OTLPTraceExporter({ url });
  const provider = new TracerProvider({
    sampler,
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 65_536 })],
  });
  const manager = new ChannelContextManager();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const tracer = provider.getTracer('cost');
  const untrace = traceChannels({
    tracer,
    sampler,
    root,
    ids,
    manager,
    trust: 'ignore',
    engine: 'common',
  });
  return {
    flush: () => provider.forceFlush(),
    stop: async () => {
      untrace();
      await provider.shutdown();
      context.disable();
      propagation.disable();
      trace.disable();
    },
  };
}

/** Requests handled between two turns of the event loop, in which the exporter does its work. */
const BATCH = 256;

/**
 * CPU nanoseconds per simulated response through `listener`, what `flush` then exports included:
 * the process's CPU, the exporter's encoding and sending counted with the requests.
 */
async function run(flush = async () => {}) {
  const start = process.cpuUsage();
  for (let i = 0; i < RESPONSES; i++) {
    const req = {
      method: 'GET',
      url: '/',
      headers: { host: 'localhost', accept: '*/*' },
      socket: {},
      httpVersionMajor: 1,
      httpVersion: '1.1',
    };
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false });
    listener(req, res);
    if (i % BATCH === BATCH - 1) {
      await new Promise(setImmediate);
    }
  }
  await flush();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / RESPONSES;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const ratio of RATIOS) {
  const costs = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const bare = await run();
    const tracing = traced(ratio);
    const cost = (await run(tracing.flush)) - bare;
    await tracing.stop();
    costs.push(cost);
    console.log(`ratio ${ratio}, round ${round}: ${cost.toFixed(0)} ns of CPU per response`);
  }
  console.log(`ratio ${ratio}: median ${median(costs).toFixed(0)} ns per response`);
}
sink.kill();
