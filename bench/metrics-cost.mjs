// What METRICS_PORT adds to each response, in CPU time: the request channel (server/observe/
// requests.ts) with the metrics' response timer subscribed (server/metrics/timings.ts), run on a
// million simulated responses, against the same listener with nobody subscribed (what the origin
// runs by default). The end-to-end bench (`--variants origin,origin-metrics`) cannot resolve a
// difference this small on a shared machine. Run: node bench/metrics-cost.mjs (Node 24 strips the
// types of the .ts it imports).
import { EventEmitter } from 'node:events';
import { createTimings } from '../server/metrics/timings.ts';
import { observedRequests } from '../server/observe/requests.ts';

const RESPONSES = 1_000_000;
const ROUNDS = 5;
const unnamed = () => undefined;
/** A handler that finishes its response at once, as the fast path does. */
const answer = (req, res) => {
  res.writableFinished = true;
  res.emit('close');
};
const listener = observedRequests(answer, unnamed);
// The histograms are registered once; each round subscribes them and unsubscribes them again.
const timings = createTimings();

/** CPU nanoseconds per simulated response through `listener`. */
function run(listener) {
  const start = process.cpuUsage();
  for (let i = 0; i < RESPONSES; i++) {
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: false });
    listener({ method: 'GET', url: '/' }, res);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / RESPONSES;
}

const costs = [];
for (let round = 1; round <= ROUNDS; round++) {
  const bare = run(listener);
  const unsubscribe = timings.subscribe();
  const timed = run(listener);
  unsubscribe();
  const cost = timed - bare;
  costs.push(cost);
  console.log(`round ${round}: ${cost.toFixed(0)} ns of CPU per timed response`);
}
costs.sort((a, b) => a - b);
console.log(`median: ${costs[Math.floor(ROUNDS / 2)].toFixed(0)} ns per response`);
